// Sign up, log in, log out; your comments, hidden ones marked. API errors are shown next to the field they concern.
import { api, session } from './api.js';
import { h, replace } from './dom.js';
import { t } from './i18n.js';
import { authoredItem } from './admin-users.js';

export async function accountView(main, onChange) {
  if (session.user) {
    const mine = h('ol', { class: 'comments', id: 'my-comments' });
    replace(main, h('section', { class: 'account' },
      h('p', { id: 'logged-in' }, t('account.loggedIn'), h('strong', {}, session.user.username)),
      h('button', { type: 'button', id: 'logout', onclick: async () => {
        try { await api('DELETE', '/v1/sessions/current'); } catch { /* already gone */ }
        session.clear(); onChange(); accountView(main, onChange);
      } }, t('logout'))),
      h('h2', {}, t('mine.title')), mine);
    const page = await api('GET', '/v1/users/me/comments?limit=50');
    mine.replaceChildren(...page.items.map((c) => authoredItem(c)));
    if (!page.items.length) mine.append(h('li', { class: 'muted' }, t('mine.none')));
    return;
  }
  replace(main, h('div', { class: 'account-forms' },
    form('login', t('account.login'), '/v1/sessions', main, onChange),
    form('signup', t('account.signup'), '/v1/users', main, onChange)));
}

function form(id, title, path, main, onChange) {
  const field = (name, type, autocomplete) => {
    const input = h('input', { id: `${id}-${name}`, name, type, required: true, autocomplete, 'aria-describedby': `${id}-${name}-error` });
    return h('div', { class: 'field' },
      h('label', { for: `${id}-${name}` }, t(name)), input,
      h('span', { class: 'field-error', id: `${id}-${name}-error`, role: 'alert' }));
  };
  const general = h('p', { class: 'error', role: 'alert' });
  const el = h('form', { id, class: 'card' }, h('h2', {}, title),
    field('username', 'text', 'username'),
    field('password', 'password', id === 'signup' ? 'new-password' : 'current-password'),
    general, h('button', { type: 'submit' }, title));
  el.addEventListener('submit', async (event) => {
    event.preventDefault();
    for (const span of el.querySelectorAll('.field-error')) span.textContent = '';
    general.textContent = '';
    try {
      const result = await api('POST', path, { username: el.username.value, password: el.password.value });
      session.save(result.sessionToken, result.user);
      onChange();
      location.hash = '#/';
    } catch (error) {
      let placed = false;
      for (const [name, message] of Object.entries(error.fields || {})) {
        const span = el.querySelector(`#${id}-${name}-error`);
        if (span) { span.textContent = message; placed = true; }
      }
      if (!placed) general.textContent = error.message;
    }
  });
  return el;
}
