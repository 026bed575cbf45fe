// The operator console (/admin): tabs over the admin screens. The page only reflects the rights
// the API enforces: whoever is not an admin sees a refusal and no data, and any 401/403 from the
// API ends in the same refusal.
import { ApiError, api, session } from './api.js';
import { h, replace } from './dom.js';
import { t } from './i18n.js';
import './admin-texts.js';
import { cafeScreen, cafesScreen } from './admin-cafes.js';
import { reportsScreen } from './admin-reports.js';
import { userScreen, usersScreen } from './admin-users.js';
import { jobsScreen } from './admin-jobs.js';
import { auditScreen } from './admin-audit.js';
import { mailScreen } from './admin-mail.js';

const tabs = ['cafes', 'reports', 'users', 'mail', 'jobs', 'audit'];
const screens = [
  [/^cafes$/, cafesScreen], [/^cafes\/(new|\d+)$/, cafeScreen], [/^reports$/, reportsScreen],
  [/^users$/, usersScreen], [/^users\/(\d+)$/, userScreen], [/^jobs$/, jobsScreen], [/^audit$/, auditScreen], [/^mail$/, mailScreen],
];

export async function adminView(main, path) {
  let user = null;
  if (session.token) {
    try { user = await api('GET', '/v1/users/me'); session.save(session.token, user); } catch { user = null; }
  }
  if (!user?.isAdmin) return refuse(main, user);
  const body = h('div', { class: 'admin-body', id: 'admin-body' });
  const current = path.split('/')[0];
  replace(main, h('div', { class: 'admin' },
    h('nav', { class: 'admin-tabs', 'aria-label': t('admin.title') },
      tabs.map((tab) => h('a', { href: `#/admin/${tab}`, id: `tab-${tab}`, 'aria-current': tab === current ? 'page' : false }, t(`admin.tab.${tab}`)))),
    body));
  const found = screens.find(([pattern]) => pattern.test(path));
  if (!found) return replace(body, h('p', {}, t('notFound')));
  try {
    await found[1](body, ...path.match(found[0]).slice(1));
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return refuse(main, null);
    throw error;
  }
}

function refuse(main, user) {
  replace(main, h('section', { class: 'card refusal', id: 'admin-refusal', role: 'alert' },
    h('h1', {}, t('admin.refused.title')),
    h('p', {}, user ? t('admin.refused.notAdmin') : t('admin.refused.login')),
    user ? null : h('a', { href: '#/account' }, t('nav.login'))));
}

/// A message line under a screen's title for the outcome of an action.
export function notice() {
  return h('p', { class: 'notice', id: 'admin-notice', role: 'status', 'aria-live': 'polite' });
}

/// Shows an API error next to the form field it names, else in `general`.
export function showError(error, form, general) {
  for (const span of form.querySelectorAll('.field-error')) span.textContent = '';
  let placed = false;
  for (const [name, message] of Object.entries(error.fields || {})) {
    // A nested field (openingHours.mon[0]) is said under its top field, naming where.
    const top = name.split(/[.[]/)[0];
    const span = form.querySelector(`[data-error-for="${name}"]`) || form.querySelector(`[data-error-for="${top}"]`);
    if (span) { span.textContent = (span.textContent ? `${span.textContent} ` : '') + (name === top ? message : `${name}: ${message}`); placed = true; }
  }
  general.textContent = placed ? '' : error.message;
}

/// "Load more" for a keyset-paged admin listing: `fetchPage(cursor)` → {items, nextCursor}.
export function pager(list, more, fetchPage, row) {
  async function load(reset) {
    const page = await fetchPage(reset ? null : more.dataset.cursor);
    if (reset) list.replaceChildren();
    page.items.forEach((item) => list.append(row(item)));
    more.hidden = !page.nextCursor;
    more.dataset.cursor = page.nextCursor || '';
    return page;
  }
  more.onclick = () => load(false);
  return load;
}
