// The audit log: every operator action, newest first: who, what, which object, each changed
// field before and after. Read-only here, and the database refuses any change to it.
import { api } from './api.js';
import { h, replace } from './dom.js';
import { formatDate, t } from './i18n.js';
import { pager } from './admin.js';

export async function auditScreen(body) {
  const rows = h('tbody', { id: 'audit' });
  const more = h('button', { type: 'button', class: 'more', hidden: true }, t('more'));
  replace(body, h('h1', {}, t('admin.tab.audit')),
    h('div', { class: 'table-wrap' }, h('table', { class: 'admin-table' },
      h('thead', {}, h('tr', {}, ['admin.audit.at', 'admin.audit.actor', 'admin.audit.action', 'admin.audit.object', 'admin.audit.changes']
        .map((key) => h('th', { scope: 'col' }, t(key))))),
      rows)),
    more);
  const load = pager(rows, more, (cursor) => api('GET', `/v1/admin/audit?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
    (entry) => h('tr', { dataset: { action: entry.action } },
      h('td', {}, formatDate(entry.at)), h('td', {}, entry.actor.username ?? `#${entry.actor.id} (${t('admin.users.deletedAccount')})`), h('td', {}, h('code', {}, entry.action)),
      h('td', {}, `${entry.objectType} ${entry.objectId}`),
      h('td', {}, h('ul', { class: 'changes' }, entry.changes.map((c) =>
        h('li', {}, h('strong', {}, c.field), ': ', c.before ?? '∅', ' → ', c.after ?? '∅'))))));
  await load(true);
}
