// The moderation queue: reported comments with their photo, author and reasons, the most recently
// or the most reported first; hide one (it leaves every listing and its cafe's aggregates in the
// worker's next pass) or dismiss its reports.
import { api } from './api.js';
import { replyModeration } from './admin-replies.js';
import { h, replace, photoImg } from './dom.js';
import { formatDate, t } from './i18n.js';
import { rating } from './stars.js';
import { notice } from './admin.js';

let order = 'newest';

export async function reportsScreen(body) {
  const sort = h('select', { id: 'reports-sort', 'aria-label': t('sort.label') },
    ['newest', 'mostReported'].map((s) => h('option', { value: s, selected: s === order }, t(`admin.reports.${s}`))));
  const list = h('ol', { class: 'comments', id: 'reports' });
  const status = notice();
  replace(body, h('div', { class: 'admin-head' }, h('h1', {}, t('admin.tab.reports')), sort), status, list);

  async function load() {
    const queue = await api('GET', `/v1/admin/reports?sort=${order}&limit=50`);
    list.replaceChildren(...queue.items.map((item) => reportedItem(item, act)));
    if (!queue.items.length) list.append(h('li', { class: 'muted' }, t('admin.reports.empty')));
  }
  async function act(item, verb) {
    await api('POST', `/v1/admin/comments/${item.id}/${verb}`);
    await load();
    status.textContent = t(`admin.reports.${verb}Done`);
  }
  sort.addEventListener('change', () => { order = sort.value; load(); });
  await load();
}

function reportedItem(item, act) {
  return h('li', { class: 'comment reported', dataset: { commentId: item.id } },
    h('div', { class: 'comment-head' },
      rating(item.star), ' ',
      h('a', { href: `#/admin/users/${item.userId}`, class: 'comment-author' }, item.username), ' · ',
      h('a', { href: `#/admin/cafes/${item.cafeId}` }, item.cafeName), h('span', { class: 'muted' }, ` · ${formatDate(item.createdAt)}`)),
    h('p', { class: 'comment-detail' }, item.detail),
    item.imageUrl ? photoImg(item, { class: 'comment-photo', alt: '' }, '160px') : null,
    replyModeration(item),
    h('p', { class: 'report-count' }, h('strong', {}, String(item.reportCount)), ` ${t('admin.reports.count')}`),
    h('ul', { class: 'reasons' }, item.reports.map((r) =>
      h('li', {}, h('span', { class: 'muted' }, `${r.username ?? t('admin.users.deletedAccount')} · ${formatDate(r.createdAt)}: `), r.reason))),
    h('div', { class: 'comment-actions' },
      h('button', { type: 'button', class: 'hide danger', onclick: () => act(item, 'hide') }, t('admin.hide')),
      h('button', { type: 'button', class: 'dismiss', onclick: () => act(item, 'dismiss') }, t('admin.reports.dismiss'))));
}
