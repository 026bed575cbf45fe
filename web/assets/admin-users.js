// Operators' accounts: search; block (optionally hiding every comment in the same action) and
// unblock (optionally bringing them back); grant or revoke the admin right; one account's comments,
// hidden ones marked, each hidden or restored on its own.
import { api, privatePhotoURL } from './api.js';
import { replyModeration } from './admin-replies.js';
import { debounce, h, replace, photoImg } from './dom.js';
import { formatDate, t } from './i18n.js';
import { rating } from './stars.js';
import { notice, pager } from './admin.js';

let query = '';

export async function usersScreen(body) {
  const search = h('input', { type: 'search', id: 'admin-user-search', value: query, placeholder: t('admin.users.search'),
                              'aria-label': t('admin.users.search'), autocomplete: 'off' });
  const rows = h('tbody', { id: 'admin-users' });
  const more = h('button', { type: 'button', class: 'more', hidden: true }, t('more'));
  const status = notice();
  replace(body, h('h1', {}, t('admin.tab.users')), status, h('div', { class: 'controls' }, search),
    h('div', { class: 'table-wrap' }, h('table', { class: 'admin-table' },
      h('thead', {}, h('tr', {}, ['username', 'email', 'admin.users.role', 'admin.state', 'admin.created', 'admin.actions']
        .map((key) => h('th', { scope: 'col' }, t(key))))),
      rows)),
    more);
  const load = pager(rows, more, (cursor) => {
    const params = new URLSearchParams({ limit: '50' });
    if (query.trim()) params.set('q', query.trim());
    if (cursor) params.set('cursor', cursor);
    return api('GET', `/v1/admin/users?${params}`);
  }, (account) => userRow(account, async (method, url, payload, done) => {
    try {
      await api(method, url, payload);
      await load(true);
      status.textContent = done;
    } catch (error) {
      status.textContent = error.message;
    }
  }));
  search.addEventListener('input', debounce(() => { query = search.value; load(true); }, 250));
  await load(true);
}

function userRow(account, act) {
  const comments = h('input', { type: 'checkbox', id: `comments-${account.id}` });
  const blockAction = account.blocked
    ? h('button', { type: 'button', class: 'unblock', onclick: () => act('POST', `/v1/admin/users/${account.id}/unblock`,
        { restoreComments: comments.checked }, t('admin.users.unblocked')) }, t('admin.users.unblock'))
    : h('button', { type: 'button', class: 'block danger', onclick: () => act('POST', `/v1/admin/users/${account.id}/block`,
        { hideComments: comments.checked }, t('admin.users.blocked')) }, t('admin.users.block'));
  const roleAction = h('button', { type: 'button', class: 'role', onclick: () => act(
    account.isAdmin ? 'DELETE' : 'PUT', `/v1/admin/users/${account.id}/admin`, undefined,
    t(account.isAdmin ? 'admin.users.revoked' : 'admin.users.granted')) }, t(account.isAdmin ? 'admin.users.revoke' : 'admin.users.grant'));
  return h('tr', { dataset: { userId: account.id, username: account.username } },
    h('td', {}, h('a', { href: `#/admin/users/${account.id}` }, account.username)),
    h('td', { class: 'email' }, account.email ? [account.email, ' ',
      h('span', { class: account.emailVerified ? 'state listed' : 'state archived' }, t(account.emailVerified ? 'account.verified' : 'account.unverified'))] : '—'),
    h('td', {}, account.isAdmin ? t('admin.users.admin') : '—'),
    h('td', {}, h('span', { class: account.blocked ? 'state archived' : 'state listed' }, t(account.blocked ? 'admin.users.isBlocked' : 'admin.users.active'))),
    h('td', {}, formatDate(account.createdAt)),
    h('td', { class: 'row-actions' }, blockAction,
      h('label', { class: 'check', for: `comments-${account.id}` }, comments, ` ${t(account.blocked ? 'admin.users.restoreComments' : 'admin.users.hideComments')}`),
      roleAction));
}

export async function userScreen(body, id) {
  const list = h('ol', { class: 'comments', id: 'user-comments' });
  const more = h('button', { type: 'button', class: 'more', hidden: true }, t('more'));
  const title = h('h1', { id: 'user-title' }, `#${id}`);
  const status = notice();
  const account = await api('GET', `/v1/admin/users/${id}`);
  title.textContent = t('admin.users.commentsOf').replace('{name}', account.username);
  replace(body, h('a', { href: '#/admin/users', class: 'back' }, t('admin.users.back')), title, status,
    h('p', { id: 'user-email' }, account.email ?? t('account.noEmail'), ' ',
      account.email ? h('span', { class: account.emailVerified ? 'state listed' : 'state archived' }, t(account.emailVerified ? 'account.verified' : 'account.unverified')) : null),
    list, more, deletion(account));
  const load = pager(list, more, (cursor) => api('GET', `/v1/admin/users/${id}/comments?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
    (c) => authoredItem(c, async (verb) => {
      await api('POST', `/v1/admin/comments/${c.id}/${verb}`);
      await load(true);
      status.textContent = t(verb === 'hide' ? 'admin.reports.hideDone' : 'admin.restoreDone');
    }));
  const page = await load(true);
  if (!page.items.length) list.append(h('li', { class: 'muted' }, t('mine.none')));
}

/// Deleting the account, after a confirmation that says what goes with it (the counts the API checks again).
function deletion(account) {
  const c = account.contents;
  const confirmBox = h('input', { type: 'checkbox', id: 'user-delete-confirm' });
  const message = h('p', { class: 'error', role: 'alert' });
  const remove = h('button', { type: 'button', id: 'user-delete', class: 'danger', disabled: true, onclick: async () => {
    try {
      await api('DELETE', `/v1/admin/users/${account.id}?${new URLSearchParams({ comments: c.comments, hiddenComments: c.hiddenComments, photos: c.photos, reports: c.reports })}`);
      location.hash = '#/admin/users';
    } catch (error) {
      message.textContent = error.message;
    }
  } }, t('admin.users.delete'));
  confirmBox.addEventListener('change', () => { remove.disabled = !confirmBox.checked; });
  return h('section', { class: 'card danger-zone' },
    h('p', { id: 'user-delete-contents' }, t('admin.users.deleteContents').replace('{comments}', c.comments)
      .replace('{hidden}', c.hiddenComments).replace('{photos}', c.photos).replace('{reports}', c.reports)),
    h('label', { class: 'check' }, confirmBox, ` ${t('admin.cafe.deleteConfirm')}`), message, remove);
}

/// A hidden comment's photo, which only its author and the admins may fetch: with the session, as a blob.
function hiddenPhoto(c) {
  const img = h('img', { class: 'comment-photo', alt: '', width: c.imageWidth ?? undefined, height: c.imageHeight ?? undefined });
  privatePhotoURL(`${c.imageUrl}?w=320`).then((url) => { if (url) img.src = url; });
  return img;
}

/// A comment with its hidden state; `act('hide' | 'restore')` when given (the console).
export function authoredItem(c, act) {
  return h('li', { class: c.hidden ? 'comment is-hidden' : 'comment', dataset: { commentId: c.id } },
    h('div', { class: 'comment-head' }, rating(c.star), ' ',
      h('strong', {}, c.cafeName), h('span', { class: 'muted' }, ` · ${formatDate(c.createdAt)}`),
      c.hidden ? h('span', { class: 'state archived hidden-mark', title: t(`hidden.${c.hiddenBecause}`) }, ` ${t('mine.hidden')}: ${t(`hidden.${c.hiddenBecause}`)}`) : null),
    h('p', { class: 'comment-detail' }, c.detail),
    c.imageUrl ? (c.hidden ? hiddenPhoto(c) : photoImg(c, { class: 'comment-photo', alt: '' }, '160px')) : null,
    act && !c.hidden ? replyModeration(c) : null,
    act && c.hiddenBecause !== 'archive' ? h('div', { class: 'comment-actions' },
      c.hidden ? h('button', { type: 'button', class: 'restore', onclick: () => act('restore') }, t('admin.restore'))
               : h('button', { type: 'button', class: 'hide danger', onclick: () => act('hide') }, t('admin.hide'))) : null);
}
