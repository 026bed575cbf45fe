// The mail outbox, newest first: what was sent and what is kept unsent (no SMTP_URL, as `make run`
// serves), with a kept mail's text and its link, so someone trying the service locally can follow it.
import { api } from './api.js';
import { h, replace } from './dom.js';
import { formatDate, t } from './i18n.js';
import { pager } from './admin.js';

export async function mailScreen(body) {
  const list = h('ol', { class: 'mail-list', id: 'admin-mail' });
  const more = h('button', { type: 'button', class: 'more', hidden: true }, t('more'));
  replace(body, h('h1', {}, t('admin.tab.mail')), h('p', { class: 'muted' }, t('admin.mail.help')), list, more);
  const load = pager(list, more, (cursor) => api('GET', `/v1/admin/mail?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`), mailItem);
  const page = await load(true);
  if (!page.items.length) list.append(h('li', { class: 'muted' }, t('admin.mail.empty')));
}

function mailItem(m) {
  const link = m.body?.split(/\s+/).find((word) => /^https?:\/\//.test(word));
  return h('li', { class: 'card mail', dataset: { mailId: m.id, kind: m.kind, state: m.state, recipient: m.recipient } },
    h('div', {}, h('strong', {}, m.subject ?? t(`mail.${m.kind}`)), ' ',
      h('span', { class: m.state === 'failed' ? 'state archived' : 'state listed' }, t(`mail.state.${m.state}`))),
    h('p', { class: 'muted' }, `${t('admin.mail.to')}: ${m.recipient} · ${formatDate(m.createdAt)} · ${t('admin.mail.attempts')}: ${m.attempts}`,
      m.lastError ? ` · ${m.lastError}` : ''),
    link ? h('p', {}, h('a', { href: link, class: 'mail-link' }, link)) : null,
    m.body ? h('pre', { class: 'mail-body' }, m.body) : null);
}
