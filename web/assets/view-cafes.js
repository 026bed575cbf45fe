// The cafe list: newest first with the newest featured large, as-you-type search, four orders — the
// fourth, nearest first, asks the browser where the reader is only when they choose it — and, near
// them, only the cafes open now. Every card says how far it is (nearest first) and whether it is open.
import { api, normalizedKeywords } from './api.js';
import { debounce, h, replace, photoImg } from './dom.js';
import { t } from './i18n.js';
import { stars } from './stars.js';
import { distanceText, hoursNote } from './hours.js';

const state = { q: '', sort: 'newest', near: null, openNow: false };

/// Where the reader is, asked of the browser (which asks the reader); rejects with its reason.
function whereAmI() {
  return new Promise((resolve, reject) => {
    if (!navigator.geolocation) { reject(new Error('geolocation')); return; }
    navigator.geolocation.getCurrentPosition((p) => resolve({ latitude: p.coords.latitude, longitude: p.coords.longitude }),
      (error) => reject(new Error(error.message || String(error.code))), { timeout: 15_000, maximumAge: 60_000 });
  });
}

export async function cafesView(main) {
  const input = h('input', { type: 'search', id: 'search', value: state.q, placeholder: t('search'), 'aria-label': t('search'), autocomplete: 'off' });
  const matching = h('p', { class: 'matching muted', id: 'matching', 'aria-live': 'polite' });
  const sort = h('select', { id: 'sort', 'aria-label': t('sort.label') },
    ['newest', 'rating', 'popular', 'near'].map((s) => h('option', { value: s, selected: s === state.sort }, t(`sort.${s}`))));
  const openNow = h('input', { type: 'checkbox', id: 'open-now', checked: state.openNow });
  const openNowLabel = h('label', { class: 'check', id: 'open-now-label', hidden: state.sort !== 'near' }, openNow, ` ${t('openNow')}`);
  const locating = h('p', { class: 'muted', id: 'locating', role: 'status' });
  const list = h('div', { id: 'cafe-list', class: 'cafe-list', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', class: 'more', hidden: true }, t('more'));
  // The rating order is the weighted score's, not the plain mean's: say so where it is chosen.
  const note = h('p', { class: 'muted sort-note', id: 'sort-note', hidden: state.sort !== 'rating' }, t('sort.rating.note'));
  replace(main, h('section', { class: 'controls' }, input, sort, openNowLabel), note, locating, matching, list, more);

  let generation = 0;
  async function load(reset) {
    const mine = reset ? ++generation : generation;
    const params = new URLSearchParams({ limit: '20' });
    if (state.sort === 'near') {
      params.set('near', `${state.near.latitude},${state.near.longitude}`);
      if (state.openNow) params.set('openNow', 'true');
    } else {
      params.set('sort', state.sort);
    }
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
  sort.addEventListener('change', async () => {
    if (sort.value === 'near' && !state.near) {
      locating.textContent = t('near.asking');
      try {
        state.near = await whereAmI();
        locating.textContent = '';
      } catch (error) {
        locating.textContent = t('near.refused') + error.message;
        sort.value = state.sort;
        return;
      }
    }
    state.sort = sort.value;
    note.hidden = state.sort !== 'rating';
    openNowLabel.hidden = state.sort !== 'near';
    load(true);
  });
  openNow.addEventListener('change', () => { state.openNow = openNow.checked; load(true); });
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
      stars(cafe.averageStar, cafe.commentSum),
      placeLine(cafe)));
}

function cafeRow(cafe) {
  return h('a', { class: 'cafe-row', href: `#/cafes/${cafe.id}`, dataset: { cafeId: cafe.id } },
    photo(cafe, 'thumb'),
    h('div', {},
      h('h3', { class: 'cafe-name' }, cafe.name),
      h('p', { class: 'catch' }, cafe.catchCopy),
      stars(cafe.averageStar, cafe.commentSum),
      placeLine(cafe)));
}

/// "350 m · Open · closes at 22:00": how far (in a nearest-first list) and whether it is open.
function placeLine(cafe) {
  const distance = cafe.distance !== undefined ? h('span', { class: 'distance' }, distanceText(cafe.distance)) : null;
  const note = hoursNote(cafe);
  if (!distance && !note) return null;
  return h('p', { class: 'place muted' }, distance, distance && note ? ' · ' : null,
    note ? h('span', { class: cafe.openNow ? 'hours-note open' : 'hours-note' }, note) : null);
}
