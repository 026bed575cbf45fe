// The photo wall: everyone's recent comments that carry a photo, newest first.
import { api } from './api.js';
import { h, replace, photoImg } from './dom.js';
import { formatDate, t } from './i18n.js';
import { watch } from './live.js';

export async function wallView(main) {
  const grid = h('div', { class: 'wall', id: 'wall' });
  const more = h('button', { type: 'button', class: 'more', hidden: true }, t('more'));
  replace(main, h('h1', {}, t('wall')), grid, more);
  async function load() {
    const params = new URLSearchParams({ withImage: 'true', limit: '24' });
    if (more.dataset.cursor) params.set('cursor', more.dataset.cursor);
    const page = await api('GET', `/v1/comments?${params}`);
    for (const c of page.items) grid.append(tile(c));
    if (!grid.children.length) grid.append(h('p', { class: 'muted' }, t('wallEmpty')));
    more.hidden = !page.nextCursor;
    more.dataset.cursor = page.nextCursor || '';
  }
  // New photos appear first, edits in place, removals go: as they happen.
  function find(commentId) { return grid.querySelector(`figure[data-comment-id="${commentId}"]`); }
  function upsert(c) {
    const old = find(c.id);
    if (old) old.replaceWith(tile(c));
    else {
      grid.querySelector('p.muted')?.remove();
      grid.prepend(tile(c));
    }
  }
  more.addEventListener('click', load);
  await load();
  watch('/v1/comments/live', {
    'comment.created': upsert,
    'comment.updated': upsert,
    'comment.deleted': (c) => find(c.id)?.remove(),
    reload: () => { grid.replaceChildren(); more.dataset.cursor = ''; load(); },
  });
}

function tile(c) {
  return h('figure', { class: 'tile', dataset: { commentId: c.id } },
    h('a', { href: `#/cafes/${c.cafeId}` }, photoImg(c, { alt: c.detail }, '(max-width: 600px) 50vw, 240px')),
    h('figcaption', {},
      h('a', { class: 'tile-cafe', href: `#/cafes/${c.cafeId}` }, c.cafeName),
      h('span', { class: 'muted' }, ` ${t('by')} ${c.username} · ${formatDate(c.createdAt)}`)));
}
