// The pages a mail's link opens, and the form that asks for one: forgot password → a reset link by
// mail → a new password (and a fresh session); a verification link → the address verified. The token
// is taken out of the address bar once used.
import { api, session } from './api.js';
import { h, replace } from './dom.js';
import { t } from './i18n.js';
import { field, onSubmit } from './forms.js';

export function forgotView(main) {
  const general = h('p', { class: 'error', role: 'alert' });
  const el = h('form', { id: 'forgot', class: 'card' }, h('h2', {}, t('forgot.title')), h('p', { class: 'muted' }, t('forgot.help')),
    field('forgot', 'email', 'email', 'email'), general, h('button', { type: 'submit' }, t('forgot.send')));
  onSubmit(el, general, async (form) => {
    await api('POST', '/v1/password-resets', { email: form.email.value });
    replace(main, h('p', { id: 'forgot-sent', role: 'status' }, t('forgot.sent')));
  });
  replace(main, el);
}

export function resetView(main, token, onChange) {
  const general = h('p', { class: 'error', role: 'alert' });
  const el = h('form', { id: 'reset', class: 'card' }, h('h2', {}, t('reset.title')),
    field('reset', 'password', 'password', 'new-password', { label: t('settings.newPassword') }), general, h('button', { type: 'submit' }, t('reset.submit')));
  onSubmit(el, general, async (form) => {
    try {
      const result = await api('POST', `/v1/password-resets/${encodeURIComponent(token)}`, { password: form.password.value });
      session.save(result.sessionToken, result.user);
      onChange();
      history.replaceState(null, '', location.pathname);
      replace(main, h('p', { id: 'reset-done', role: 'status' }, t('reset.done'), ' ', h('a', { href: '#/' }, t('back'))));
    } catch (error) {
      if (error.code === 'invalid_token') error.message = t('link.invalid');
      throw error;
    }
  });
  replace(main, el);
}

export async function verifyView(main, token) {
  let text;
  try {
    const user = await api('POST', `/v1/email-verifications/${encodeURIComponent(token)}`);
    if (session.user?.id === user.id) session.save(session.token, user);
    text = t('verify.done');
  } catch (error) {
    text = error.code === 'invalid_token' ? t('link.invalid') : error.message;
  }
  history.replaceState(null, '', location.pathname);
  replace(main, h('p', { id: 'verify-result', role: 'status' }, text, ' ', h('a', { href: '#/account' }, t('nav.account'))));
}
