// CafeReview in the browser: hash routes, one view at a time.
import { api, session } from './api.js';
import { h, replace } from './dom.js';
import { currentLanguage, setLanguage, t } from './i18n.js';
import { cafesView } from './view-cafes.js';
import { cafeView } from './view-cafe.js';
import { wallView } from './view-wall.js';
import { accountView } from './view-account.js';
import { forgotView, resetView, verifyView } from './view-recovery.js';
import { adminView } from './admin.js';
import { stopWatching } from './live.js';

const main = document.getElementById('main');

const routes = [
  [/^#?\/?$/, () => cafesView(main)],
  [/^#\/cafes\/(\d+)$/, (id) => cafeView(main, id)],
  [/^#\/wall$/, () => wallView(main)],
  [/^#\/account$/, () => accountView(main, refreshNav)],
  [/^#\/forgot-password$/, () => forgotView(main)],
  [/^#\/reset-password\/([A-Za-z0-9_-]+)$/, (token) => resetView(main, token, refreshNav)],
  [/^#\/verify-email\/([A-Za-z0-9_-]+)$/, (token) => verifyView(main, token)],
  [/^#\/admin(?:\/(.*))?$/, (path) => adminView(main, path || 'cafes')],
];

async function render() {
  stopWatching();
  const hash = location.hash || '#/';
  for (const [pattern, view] of routes) {
    const match = hash.match(pattern);
    if (!match) continue;
    try {
      await view(...match.slice(1));
    } catch (error) {
      replace(main, h('p', { class: 'error', role: 'alert' }, t('error'), error.message));
    }
    return;
  }
  replace(main, h('p', {}, t('notFound')));
}

function refreshNav() {
  const link = document.getElementById('nav-account');
  link.textContent = session.user ? session.user.username : t('nav.login');
  link.removeAttribute('data-i18n');
  document.getElementById('nav-admin').hidden = !session.user?.isAdmin;
}

function renderLanguageButton() {
  const button = document.getElementById('lang');
  button.textContent = t('lang.switch');
  button.onclick = () => { setLanguage(currentLanguage() === 'ja' ? 'en' : 'ja'); renderLanguageButton(); refreshNav(); render(); };
}

// A stored session is checked once: a revoked or expired token logs the page out.
if (session.token) {
  api('GET', '/v1/users/me').then((user) => session.save(session.token, user)).catch(() => {}).finally(refreshNav);
}
// /admin is the same page opening on the operator console.
if (location.pathname === '/admin' && !location.hash.startsWith('#/admin')) history.replaceState(null, '', '/admin#/admin/cafes');
setLanguage(currentLanguage());
renderLanguageButton();
refreshNav();
window.addEventListener('hashchange', () => { render(); main.focus(); });
render();
