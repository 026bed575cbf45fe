// Operators' cafes: a searchable, paged table (archived included); create and edit every field
// with a photo picked, previewed and uploaded; archive, restore, and delete for good an archived
// cafe after a confirmation that says how many comments and photos go with it; a listed cafe's owners.
import { api, uploadPhoto } from './api.js';
import { debounce, h, replace } from './dom.js';
import { formatDate, t } from './i18n.js';
import { notice, pager, showError } from './admin.js';
import { ownersSection } from './admin-replies.js';
import { intervalsText, parseIntervals, weekdays } from './hours.js';

const filters = { q: '', state: 'all' };

export async function cafesScreen(body) {
  const search = h('input', { type: 'search', id: 'admin-cafe-search', value: filters.q, placeholder: t('admin.cafes.search'),
                              'aria-label': t('admin.cafes.search'), autocomplete: 'off' });
  const state = h('select', { id: 'admin-cafe-state', 'aria-label': t('admin.state') },
    ['all', 'listed', 'archived'].map((s) => h('option', { value: s, selected: s === filters.state }, t(`admin.state.${s}`))));
  const rows = h('tbody', { id: 'admin-cafes' });
  const more = h('button', { type: 'button', class: 'more', hidden: true }, t('more'));
  replace(body,
    h('div', { class: 'admin-head' }, h('h1', {}, t('admin.tab.cafes')),
      h('a', { class: 'button', href: '#/admin/cafes/new', id: 'admin-new-cafe' }, t('admin.cafes.new'))),
    h('div', { class: 'controls' }, search, state),
    h('div', { class: 'table-wrap' }, h('table', { class: 'admin-table' },
      h('thead', {}, h('tr', {}, ['admin.cafes.name', 'admin.cafes.comments', 'admin.cafes.average', 'admin.created', 'admin.state']
        .map((key) => h('th', { scope: 'col' }, t(key))))),
      rows)),
    more);
  const load = pager(rows, more, (cursor) => {
    const params = new URLSearchParams({ state: filters.state, limit: '50' });
    if (filters.q.trim()) params.set('q', filters.q.trim());
    if (cursor) params.set('cursor', cursor);
    return api('GET', `/v1/admin/cafes?${params}`);
  }, cafeRow);
  search.addEventListener('input', debounce(() => { filters.q = search.value; load(true); }, 250));
  state.addEventListener('change', () => { filters.state = state.value; load(true); });
  const page = await load(true);
  if (!page.items.length) rows.append(h('tr', {}, h('td', { colspan: 5, class: 'muted' }, t('noCafes'))));
}

function cafeRow(cafe) {
  return h('tr', { dataset: { cafeId: cafe.id } },
    h('td', {}, h('a', { href: `#/admin/cafes/${cafe.id}` }, cafe.name)),
    h('td', { class: 'number' }, cafe.archived ? '—' : String(cafe.commentSum)),
    h('td', { class: 'number' }, cafe.averageStar === null ? '—' : cafe.averageStar.toFixed(2)),
    h('td', {}, formatDate(cafe.createdAt)),
    h('td', {}, h('span', { class: cafe.archived ? 'state archived' : 'state listed' }, t(cafe.archived ? 'admin.state.archived' : 'admin.state.listed'))));
}

export async function cafeScreen(body, id) {
  const cafe = id === 'new' ? null : await api('GET', `/v1/admin/cafes/${id}`);
  const status = notice();
  const general = h('p', { class: 'error', role: 'alert' });
  const field = (name, input) => h('div', { class: 'field' },
    h('label', { for: `cafe-${name}` }, t(`admin.cafe.${name}`)), input,
    h('span', { class: 'field-error', dataset: { errorFor: name }, role: 'alert' }));
  const input = (name, attrs) => h('input', { id: `cafe-${name}`, name, value: cafe?.[name] ?? '', ...attrs });
  const preview = h('img', { id: 'cafe-photo-preview', class: 'photo-preview', alt: '', src: cafe?.imageUrl, hidden: !cafe?.imageUrl });
  const file = h('input', { id: 'cafe-photo', type: 'file', accept: 'image/png,image/jpeg,image/webp,image/gif' });
  const progress = h('progress', { id: 'cafe-photo-progress', max: 1, value: 0, hidden: true });
  file.addEventListener('change', () => {
    const picked = file.files[0];
    if (!picked) return;
    preview.src = URL.createObjectURL(picked);   // shown before it is uploaded (CSP allows blob: images)
    preview.hidden = false;
  });
  const archived = cafe?.archived;
  const form = h('form', { class: 'card', id: 'cafe-form' },
    field('name', input('name', { required: true, maxlength: 100 })),
    field('catchCopy', input('catchCopy', { maxlength: 200 })),
    field('introduction', h('textarea', { id: 'cafe-introduction', name: 'introduction', rows: 6, maxlength: 5000 }, cafe?.introduction ?? '')),
    field('publishDate', input('publishDate', { placeholder: '2026-12-01' })),
    field('imageId', h('div', { class: 'photo-field' }, preview, file, progress)),
    placeFields(cafe),
    general,
    archived ? h('p', { class: 'muted' }, t('admin.cafe.archivedReadOnly')) : h('button', { type: 'submit', id: 'cafe-save' }, t('save')));
  if (archived) for (const el of form.elements) el.disabled = true;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      const changes = { name: form.name.value, catchCopy: form.catchCopy.value, introduction: form.introduction.value,
                        publishDate: form.publishDate.value.trim() || null, ...placeChanges(form) };
      if (file.files[0]) {
        progress.hidden = false;
        changes.imageId = (await uploadPhoto(file.files[0], (p) => { progress.value = p; })).id;
      }
      const saved = cafe ? await api('PATCH', `/v1/cafes/${cafe.id}`, changes)
                         : await api('POST', '/v1/cafes', { imageId: null, ...changes });
      if (!cafe) { location.hash = `#/admin/cafes/${saved.id}`; return; }
      for (const span of form.querySelectorAll('.field-error')) span.textContent = '';
      general.textContent = '';
      status.textContent = t('admin.saved');
      file.value = '';
      progress.hidden = true;
    } catch (error) {
      showError(error, form, general);
    } finally {
      button.disabled = false;
    }
  });
  replace(body,
    h('a', { href: '#/admin/cafes', class: 'back' }, t('admin.cafes.back')),
    h('div', { class: 'admin-head' }, h('h1', { id: 'cafe-title' }, cafe ? cafe.name : t('admin.cafes.new')),
      cafe ? h('span', { class: archived ? 'state archived' : 'state listed', id: 'cafe-state' }, t(archived ? 'admin.state.archived' : 'admin.state.listed')) : null),
    status, form, cafe && !archived ? ownersSection(cafe.id) : null, cafe ? lifecycle(cafe, body) : null);
}

/// The place and the hours: coordinates, address, time zone (the browser's list to pick from; the
/// server checks it against PostgreSQL's), and per weekday "08:00-18:00, 19:00-02:00" (empty: closed),
/// then special days one a line, "2026-12-31: closed" or "2027-01-02: 12:00-16:00".
function placeFields(cafe) {
  const hours = cafe?.openingHours || {};
  const row = (name, input) => h('div', { class: 'field' },
    h('label', { for: `cafe-${name}` }, t(`admin.cafe.${name}`)), input,
    h('span', { class: 'field-error', dataset: { errorFor: name }, role: 'alert' }));
  const zones = h('datalist', { id: 'time-zones' }, (Intl.supportedValuesOf?.('timeZone') || []).map((z) => h('option', { value: z })));
  return h('fieldset', { class: 'place-fields', id: 'cafe-place-fields' },
    h('legend', {}, t('admin.cafe.place')),
    row('location', h('div', { class: 'pair' },
      h('input', { id: 'cafe-location', name: 'latitude', type: 'number', step: 'any', min: -90, max: 90, placeholder: '35.6595',
                   value: cafe?.location?.latitude ?? '', 'aria-label': t('admin.cafe.latitude') }),
      h('input', { id: 'cafe-longitude', name: 'longitude', type: 'number', step: 'any', min: -180, max: 180, placeholder: '139.7005',
                   value: cafe?.location?.longitude ?? '', 'aria-label': t('admin.cafe.longitude') }))),
    row('address', h('input', { id: 'cafe-address', name: 'address', maxlength: 300, value: cafe?.address ?? '' })),
    row('timeZone', h('input', { id: 'cafe-timeZone', name: 'timeZone', list: 'time-zones', value: cafe?.timeZone ?? 'Asia/Tokyo' })), zones,
    row('openingHours', h('div', { class: 'week-hours' }, weekdays.map((day) => h('label', { class: 'day-hours' }, h('span', {}, t(day)),
      h('input', { name: `hours-${day}`, id: `cafe-hours-${day}`, placeholder: '08:00-18:00', value: intervalsText(hours[day]) })) ))),
    row('exceptions', h('textarea', { id: 'cafe-exceptions', name: 'exceptions', rows: 3, placeholder: '2026-12-31: closed' },
      (hours.exceptions || []).map((e) => `${e.date}: ${intervalsText(e.hours) || 'closed'}`).join('\n'))));
}

/// The place fields as a PATCH/POST body: null clears what was emptied; no hours at all: null.
function placeChanges(form) {
  const number = (name) => form[name].value.trim() === '' ? null : Number(form[name].value);
  const [latitude, longitude] = [number('latitude'), number('longitude')];
  const week = Object.fromEntries(weekdays.map((day) => [day, parseIntervals(form[`hours-${day}`].value)]));
  const exceptions = form.exceptions.value.split('\n').map((line) => line.trim()).filter(Boolean).map((line) => {
    const [date, ...rest] = line.split(':');
    const text = rest.join(':').trim();
    return { date: date.trim(), hours: /^(closed|休み|定休日)?$/i.test(text) ? [] : parseIntervals(text) };
  });
  const anyHours = Object.values(week).some((d) => d.length) || exceptions.length;
  return {
    location: latitude === null && longitude === null ? null : { latitude, longitude },
    address: form.address.value.trim() || null,
    timeZone: form.timeZone.value.trim() || null,
    openingHours: anyHours ? { ...week, exceptions } : null,
  };
}

/// Archive / restore, and for an archived cafe the delete with its confirmation.
function lifecycle(cafe, body) {
  const act = async (verb) => {
    await api('POST', `/v1/admin/cafes/${cafe.id}/${verb}`);
    await cafeScreen(body, cafe.id);
    document.getElementById('admin-notice').textContent = t(`admin.cafe.${verb}d`);
  };
  if (!cafe.archived) {
    return h('section', { class: 'card danger-zone' },
      h('p', {}, t('admin.cafe.archiveHelp')),
      h('button', { type: 'button', id: 'cafe-archive', onclick: () => act('archive') }, t('admin.cafe.archive')));
  }
  const { comments, photos } = cafe.contents;
  const confirmBox = h('input', { type: 'checkbox', id: 'cafe-delete-confirm' });
  const remove = h('button', { type: 'button', id: 'cafe-delete', class: 'danger', disabled: true, onclick: async () => {
    try {
      await api('DELETE', `/v1/admin/cafes/${cafe.id}?comments=${comments}&photos=${photos}`);
      location.hash = '#/admin/cafes';
    } catch (error) {
      if (error.code !== 'contents_changed') throw error;
      await cafeScreen(body, cafe.id);
      document.getElementById('admin-notice').textContent = error.message;
    }
  } }, t('admin.cafe.delete'));
  confirmBox.addEventListener('change', () => { remove.disabled = !confirmBox.checked; });
  return h('section', { class: 'card danger-zone' },
    h('button', { type: 'button', id: 'cafe-restore', onclick: () => act('restore') }, t('admin.cafe.restore')),
    h('p', { id: 'cafe-delete-contents' }, t('admin.cafe.deleteContents').replace('{comments}', comments).replace('{photos}', photos)),
    h('label', { class: 'check' }, confirmBox, ` ${t('admin.cafe.deleteConfirm')}`),
    remove);
}
