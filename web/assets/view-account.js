// Sign up, log in, forgot password; logged in: your address (verified or not), language and password,
// a copy of your data, leaving the service, and your comments, hidden ones marked.
import { api, session } from './api.js';
import { h, replace } from './dom.js';
import { t } from './i18n.js';
import { authoredItem } from './admin-users.js';
import { field, onSubmit } from './forms.js';

export async function accountView(main, onChange) {
  if (session.user) return accountPage(main, onChange);
  replace(main, h('div', { class: 'account-forms' },
    entryForm('login', t('account.login'), '/v1/sessions', onChange),
    entryForm('signup', t('account.signup'), '/v1/users', onChange)),
  h('p', {}, h('a', { href: '#/forgot-password', id: 'forgot-link' }, t('forgot.link'))));
}

function entryForm(id, title, path, onChange) {
  const general = h('p', { class: 'error', role: 'alert' });
  const el = h('form', { id, class: 'card' }, h('h2', {}, title),
    field(id, 'username', 'text', 'username'),
    field(id, 'password', 'password', id === 'signup' ? 'new-password' : 'current-password'),
    id === 'signup' ? field(id, 'email', 'email', 'email', { required: false, label: t('account.emailOptional') }) : null,
    general, h('button', { type: 'submit' }, title));
  onSubmit(el, general, async (form) => {
    const body = { username: form.username.value, password: form.password.value };
    if (form.email?.value) body.email = form.email.value;
    const result = await api('POST', path, body);
    session.save(result.sessionToken, result.user);
    onChange();
    location.hash = '#/';
  });
  return el;
}

async function accountPage(main, onChange) {
  const me = await api('GET', '/v1/users/me');
  session.save(session.token, me);
  const mine = h('ol', { class: 'comments', id: 'my-comments' });
  const rerender = () => accountPage(main, onChange);
  replace(main, h('section', { class: 'account' },
    h('p', { id: 'logged-in' }, t('account.loggedIn'), h('strong', {}, me.username)),
    h('button', { type: 'button', id: 'logout', onclick: async () => {
      try { await api('DELETE', '/v1/sessions/current'); } catch { /* already gone */ }
      session.clear(); onChange(); accountView(main, onChange);
    } }, t('logout'))),
  addressCard(me),
  settingsForm(me, rerender),
  h('section', { class: 'card' }, h('h2', {}, t('export.title')), h('p', { class: 'muted' }, t('export.help')),
    h('button', { type: 'button', id: 'export', onclick: exportData }, t('export.button'))),
  deleteForm(main, onChange),
  h('h2', {}, t('mine.title')), mine);
  const page = await api('GET', '/v1/users/me/comments?limit=50');
  mine.replaceChildren(...page.items.map((c) => authoredItem(c)));
  if (!page.items.length) mine.append(h('li', { class: 'muted' }, t('mine.none')));
}

function addressCard(me) {
  const status = h('p', { id: 'verification-status', role: 'status' });
  const resend = me.email && !me.emailVerified
    ? h('button', { type: 'button', id: 'resend-verification', onclick: async () => {
      try { await api('POST', '/v1/users/me/email-verification'); status.textContent = t('verify.sent'); } catch (error) { status.textContent = error.message; }
    } }, t('verify.resend')) : null;
  return h('section', { class: 'card', id: 'address' }, h('h2', {}, t('email')),
    h('p', {}, me.email ?? t('account.noEmail'), ' ',
      me.email ? h('span', { id: 'email-state', class: me.emailVerified ? 'state listed' : 'state archived' },
        t(me.emailVerified ? 'account.verified' : 'account.unverified')) : null),
    resend, status);
}

function settingsForm(me, rerender) {
  const general = h('p', { class: 'error', role: 'alert' });
  const done = h('p', { id: 'settings-status', role: 'status' });
  const language = h('select', { id: 'settings-language', name: 'language' },
    [['', t('settings.languageBrowser')], ['ja', '日本語'], ['en', 'English']].map(([value, text]) =>
      h('option', { value, selected: (me.language ?? '') === value }, text)));
  const el = h('form', { id: 'settings', class: 'card' }, h('h2', {}, t('settings.title')),
    field('settings', 'email', 'email', 'email', { required: false, value: me.email ?? '' }),
    h('div', { class: 'field' }, h('label', { for: 'settings-language' }, t('settings.language')), language),
    field('settings', 'password', 'password', 'new-password', { required: false, label: t('settings.newPassword') }),
    field('settings', 'currentPassword', 'password', 'current-password', { required: false, label: t('settings.currentPassword') }),
    general, done, h('button', { type: 'submit' }, t('save')));
  onSubmit(el, general, async (form) => {
    const body = {};
    if (form.email.value !== (me.email ?? '')) body.email = form.email.value || null;
    if (form.language.value !== (me.language ?? '')) body.language = form.language.value || null;
    if (form.password.value) body.password = form.password.value;
    if (form.currentPassword.value) body.currentPassword = form.currentPassword.value;
    await api('PATCH', '/v1/users/me', body);
    await rerender();
    document.getElementById('settings-status').textContent = t('settings.saved');
  });
  return el;
}

/// The copy of one's data, saved as a file (fetched with the session: a link cannot carry it).
async function exportData() {
  const response = await fetch('/v1/users/me/export', { headers: { Authorization: `Bearer ${session.token}` } });
  if (!response.ok) return;
  const link = h('a', { href: URL.createObjectURL(await response.blob()), download: 'cafereview-export.json', id: 'export-file' });
  document.body.append(link);
  link.click();
  link.remove();
}

function deleteForm(main, onChange) {
  const general = h('p', { class: 'error', role: 'alert' });
  const confirmBox = h('input', { type: 'checkbox', id: 'delete-account-confirm' });
  const submit = h('button', { type: 'submit', class: 'danger', id: 'delete-account-submit', disabled: true }, t('leave.button'));
  confirmBox.addEventListener('change', () => { submit.disabled = !confirmBox.checked; });
  const el = h('form', { id: 'delete-account', class: 'card danger-zone' }, h('h2', {}, t('leave.title')), h('p', {}, t('leave.help')),
    field('delete-account', 'password', 'password', 'current-password'),
    h('label', { class: 'check' }, confirmBox, ` ${t('leave.confirm')}`), general, submit);
  onSubmit(el, general, async (form) => {
    await api('DELETE', '/v1/users/me', { password: form.password.value });
    session.clear();
    onChange();
    replace(main, h('p', { id: 'account-deleted', role: 'status' }, t('leave.done')));
  });
  return el;
}
