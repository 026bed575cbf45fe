// The cafe list: newest first with the newest featured large, as-you-type search, three orders.
import { api, normalizedKeywords } from './api.js';
import { debounce, h, replace, photoImg } from './dom.js';
import { t } from './i18n.js';
import { stars } from './stars.js';

const state = { q: '', sort: 'newest' };

export async function cafesView(main) {
  const input = h('input', { type: 'search', id: 'search', value: state.q, placeholder: t('search'), 'aria-label': t('search'), autocomplete: 'off' });
  const matching = h('p', { class: 'matching muted', id: 'matching', 'aria-live': 'polite' });
  const sort = h('select', { id: 'sort', 'aria-label': t('sort.label') },
    ['newest', 'rating', 'popular'].map((s) => h('option', { value: s, selected: s === state.sort }, t(`sort.${s}`))));
  const list = h('div', { id: 'cafe-list', class: 'cafe-list', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', class: 'more', hidden: true }, t('more'));
  // The rating order is the weighted score's, not the plain mean's: say so where it is chosen.
  const note = h('p', { class: 'muted sort-note', id: 'sort-note', hidden: state.sort !== 'rating' }, t('sort.rating.note'));
  replace(main, h('section', { class: 'controls' }, input, sort), note, matching, list, more);

  let generation = 0;
  async function load(reset) {
    const mine = reset ? ++generation : generation;
    const params = new URLSearchParams({ sort: state.sort, limit: '20' });
    if (state.q.trim()) params.set('q', state.q.trim());
    if (!reset && more.dataset.cursor) params.set('cursor', more.dataset.cursor);
    const page = await api('GET', `/v1/cafes?${params}`);
    if (mine !== generation) return;   // a newer search has started
    if (reset) list.replaceChildren();
    const featured = reset && state.sort === 'newest' && !state.q.trim() && page.items.length > 0;
    page.items.forEach((cafe, i) => list.append(featured && i === 0 ? featuredCard(cafe) : cafeRow(cafe)));
    if (reset && page.items.length === 0) list.append(h('p', { class: 'muted' }, t('noCafes')));
    more.hidden = !page.nextCursor;
    more.dataset.cursor = page.nextCursor || '';
  }
  function showMatching() {
    const words = normalizedKeywords(state.q);
    matching.textContent = words.length ? t('search.matching') + words.map((w) => `「${w}」`).join(' ') : '';
  }
  input.addEventListener('input', debounce(() => { state.q = input.value; showMatching(); load(true); }, 250));
  sort.addEventListener('change', () => { state.sort = sort.value; note.hidden = state.sort !== 'rating'; load(true); });
  more.addEventListener('click', () => load(false));
  showMatching();
  await load(true);
}

function photo(cafe, className) {
  return cafe.imageUrl
    ? photoImg(cafe, { class: className, alt: '' }, className.includes('featured') ? '(max-width: 700px) 100vw, 640px' : '160px')
    : h('div', { class: `${className} placeholder`, 'aria-hidden': 'true' }, cafe.name.slice(0, 1));
}

function featuredCard(cafe) {
  return h('a', { class: 'featured', href: `#/cafes/${cafe.id}`, dataset: { cafeId: cafe.id } },
    photo(cafe, 'featured-photo'),
    h('div', { class: 'featured-text' },
      h('span', { class: 'badge' }, t('featured')),
      h('h2', { class: 'cafe-name' }, cafe.name),
      h('p', { class: 'catch' }, cafe.catchCopy),
      stars(cafe.averageStar, cafe.commentSum)));
}

function cafeRow(cafe) {
  return h('a', { class: 'cafe-row', href: `#/cafes/${cafe.id}`, dataset: { cafeId: cafe.id } },
    photo(cafe, 'thumb'),
    h('div', {},
      h('h3', { class: 'cafe-name' }, cafe.name),
      h('p', { class: 'catch' }, cafe.catchCopy),
      stars(cafe.averageStar, cafe.commentSum)));
}
