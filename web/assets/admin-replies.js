// Owners and their replies, as operators manage them: a listed cafe's owners (added by username,
// removed), and a comment's reply shown with a button that hides it (and, once hidden, restores it).
import { api } from './api.js';
import { h, replace } from './dom.js';
import { t } from './i18n.js';

/// The owners of a listed cafe, read from its public page (which lists them), with add and remove.
export function ownersSection(cafeId) {
  const list = h('ul', { id: 'cafe-owners', class: 'owners' });
  const name = h('input', { id: 'owner-username', autocomplete: 'off', placeholder: t('admin.owners.username'), 'aria-label': t('admin.owners.username') });
  const message = h('p', { class: 'error', role: 'alert', id: 'owner-error' });
  const show = (owners) => replace(list, owners.length ? owners.map((owner) => h('li', {}, owner, ' ',
    h('button', { type: 'button', class: 'owner-remove', dataset: { username: owner }, onclick: () => change(owner, 'DELETE') }, t('admin.owners.remove'))))
    : h('li', { class: 'muted' }, t('admin.owners.none')));
  /// The API names accounts by id: the username is looked up among the accounts first.
  async function change(username, method) {
    message.textContent = '';
    try {
      const found = await api('GET', `/v1/admin/users?${new URLSearchParams({ q: username, limit: '100' })}`);
      const account = found.items.find((u) => u.username.toLowerCase() === username.toLowerCase());
      if (!account) { message.textContent = t('admin.owners.noSuchUser'); return; }
      show((await api(method, `/v1/admin/cafes/${cafeId}/owners/${account.id}`)).owners);
      name.value = '';
    } catch (error) {
      message.textContent = error.message;
    }
  }
  const form = h('form', { class: 'owner-form' }, name, h('button', { type: 'submit', id: 'owner-add' }, t('admin.owners.add')));
  form.addEventListener('submit', (event) => { event.preventDefault(); if (name.value.trim()) change(name.value.trim(), 'PUT'); });
  api('GET', `/v1/cafes/${cafeId}`).then((cafe) => show(cafe.owners || []), () => show([]));
  return h('section', { class: 'card', id: 'cafe-owners-card' }, h('h2', {}, t('owners')), list, form, message);
}

/// A comment's owners' reply with the operators' hide button; null when it has none.
export function replyModeration(c) {
  if (!c.reply) return null;
  const box = h('div', { class: 'owner-reply', dataset: { commentId: c.id } });
  const render = (hidden) => replace(box,
    h('p', { class: 'reply-label' }, t('reply.owner'), hidden ? ` (${t('admin.reply.hidden')})` : ''),
    h('p', { class: 'reply-text' }, c.reply.text),
    h('button', { type: 'button', class: hidden ? 'reply-restore' : 'reply-hide danger', onclick: async () => {
      await api('POST', `/v1/admin/comments/${c.id}/reply/${hidden ? 'restore' : 'hide'}`);
      render(!hidden);
    } }, t(hidden ? 'admin.reply.restore' : 'admin.reply.hide')));
  render(false);
  return box;
}
