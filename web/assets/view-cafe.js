// One cafe: its photo and story, its rating and the stars by count, its comments in the reader's
// order; logged-in users review it, edit or delete their own comments and vote others' helpful, and
// its owners answer comments (the server enforces all of it: the controls are only a courtesy).
import { api, session, uploadPhoto } from './api.js';
import { h, replace, photoImg } from './dom.js';
import { formatDate, t } from './i18n.js';
import { rating, starBars, starPicker, stars } from './stars.js';
import { watch } from './live.js';
import { hoursNote, intervalsText, weekdays } from './hours.js';

export async function cafeView(main, id) {
  const cafe = await api('GET', `/v1/cafes/${id}`);
  const rating = h('p', { id: 'rating' }, stars(cafe.averageStar, cafe.commentSum));
  const bars = h('div', {}, starBars(cafe.starCounts, cafe.commentSum));
  const list = h('ol', { class: 'comments', id: 'comments' });
  const more = h('button', { type: 'button', class: 'more', hidden: true }, t('more'));
  const order = h('select', { id: 'comment-sort', class: 'comment-sort', 'aria-label': t('comments.sort') },
    ['newest', 'helpful', 'stars'].map((s) => h('option', { value: s }, t(`comments.${s}`))));
  // What this reader may do to a comment, and their own votes (live events carry everyone's view).
  const viewer = { owner: !!session.user && (cafe.owners || []).includes(session.user.username), voted: new Map() };
  replace(main,
    h('a', { href: '#/', class: 'back' }, t('back')),
    h('article', { class: 'cafe' },
      cafe.imageUrl ? photoImg(cafe, { class: 'cafe-photo', alt: '' }, '(max-width: 900px) 100vw, 900px')
                    : h('div', { class: 'cafe-photo placeholder', 'aria-hidden': 'true' }, cafe.name.slice(0, 1)),
      h('h1', { id: 'cafe-name' }, cafe.name),
      h('p', { class: 'catch' }, cafe.catchCopy),
      rating, bars,
      cafe.owners?.length ? h('p', { class: 'muted owners' }, `${t('owners')}: ${cafe.owners.join(', ')}`) : null,
      h('p', { class: 'introduction' }, cafe.introduction),
      placeSection(cafe)),
    session.user ? reviewForm(cafe, afterWrite) : h('p', { class: 'muted' }, h('a', { href: '#/account' }, t('review.login'))),
    h('h2', {}, t('commentsTitle')), order, list, more);

  async function load(reset) {
    const params = new URLSearchParams({ sort: order.value, limit: '20' });
    if (!reset && more.dataset.cursor) params.set('cursor', more.dataset.cursor);
    const page = await api('GET', `/v1/cafes/${id}/comments?${params}`);
    if (reset) list.replaceChildren();
    page.items.forEach((c) => list.append(commentItem(c, viewer, afterWrite)));
    if (reset && !page.items.length) list.append(h('li', { class: 'muted' }, t('noComments')));
    more.hidden = !page.nextCursor;
    more.dataset.cursor = page.nextCursor || '';
  }

  /// After a write: the list at once; the new rating arrives live once the worker has counted it.
  async function afterWrite() {
    await load(true);
  }

  function showCafe(fresh) {
    Object.assign(cafe, fresh);
    replace(rating, stars(fresh.averageStar, fresh.commentSum));
    replace(bars, starBars(fresh.starCounts, fresh.commentSum));
  }

  // Changes as they happen: new comments on top, edits in place (not one being edited here), removals, the stars.
  function item(commentId) { return list.querySelector(`li[data-comment-id="${commentId}"]`); }
  function upsert(c) {
    const old = item(c.id);
    if (old && old.querySelector('form')) return;
    const fresh = commentItem(c, viewer, afterWrite);
    if (old) old.replaceWith(fresh);
    else {
      list.querySelector('li.muted')?.remove();
      list.prepend(fresh);
    }
  }

  more.addEventListener('click', () => load(false));
  order.addEventListener('change', () => load(true));
  await load(true);
  watch(`/v1/cafes/${id}/live`, {
    'comment.created': upsert,
    'comment.updated': upsert,
    'comment.deleted': (c) => item(c.id)?.remove(),
    'cafe.updated': showCafe,
    'cafe.deleted': () => { location.hash = '#/'; },
    reload: async () => { await load(true); showCafe(await api('GET', `/v1/cafes/${id}`)); },
  });
}

function reviewForm(cafe, afterWrite) {
  const detail = h('textarea', { id: 'review-detail', name: 'detail', required: true, maxlength: 2000, rows: 3, 'aria-describedby': 'review-error' });
  const file = h('input', { id: 'review-photo', type: 'file', accept: 'image/png,image/jpeg,image/webp,image/gif' });
  const progress = h('progress', { id: 'upload-progress', max: 1, value: 0, hidden: true, 'aria-label': t('review.uploading') });
  const error = h('p', { class: 'error', id: 'review-error', role: 'alert' });
  const form = h('form', { class: 'card review', id: 'review' },
    h('h2', {}, t('review.title')),
    starPicker('star', 0),
    h('label', { for: 'review-detail' }, t('review.detail')), detail,
    h('label', { for: 'review-photo' }, t('review.photo')), file, progress,
    error, h('button', { type: 'submit' }, t('review.submit')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      let imageId;
      if (file.files[0]) {
        progress.hidden = false;
        imageId = (await uploadPhoto(file.files[0], (p) => { progress.value = p; })).id;
      }
      await api('POST', `/v1/cafes/${cafe.id}/comments`, { detail: detail.value, star: Number(form.star.value), imageId });
      form.reset();
      progress.hidden = true;
      await afterWrite();
    } catch (e) {
      error.textContent = Object.values(e.fields || {})[0] || e.message;
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

function commentItem(c, viewer, afterWrite) {
  const mine = session.user && session.user.id === c.userId;
  if (c.votedHelpful !== undefined) viewer.voted.set(c.id, c.votedHelpful);
  const text = h('p', { class: 'comment-detail' }, c.detail);
  const item = h('li', { class: 'comment', dataset: { commentId: c.id } },
    h('div', { class: 'comment-head' },
      rating(c.star),
      h('span', { class: 'muted' }, ` ${t('by')} `, h('span', { class: 'comment-author' }, c.username), ` · ${formatDate(c.createdAt)}`)),
    text,
    c.imageUrl ? photoImg(c, { class: 'comment-photo', alt: '' }, '320px') : null,
    c.reply ? h('div', { class: 'owner-reply' },
      h('p', { class: 'reply-label' }, t('reply.owner')), h('p', { class: 'reply-text' }, c.reply.text)) : null);
  const actions = h('div', { class: 'comment-actions' }, helpfulButton(c, viewer, session.user && !mine));
  if (mine) {
    actions.append(
      h('button', { type: 'button', class: 'edit', onclick: () => edit(item, c, afterWrite) }, t('edit')),
      h('button', { type: 'button', class: 'delete', onclick: async () => {
        if (!confirm(t('delete.confirm'))) return;
        await api('DELETE', `/v1/comments/${c.id}`);
        await afterWrite();
      } }, t('delete')));
  } else if (session.user) {
    actions.append(h('button', { type: 'button', class: 'report', onclick: (event) => reportForm(item, c, event.target) }, t('report')));
  }
  if (viewer.owner) {
    actions.append(h('button', { type: 'button', class: 'reply', onclick: () => replyForm(item, c, afterWrite) }, c.reply ? t('reply.edit') : t('reply.write')));
    if (c.reply) {
      actions.append(h('button', { type: 'button', class: 'reply-delete', onclick: async () => {
        await api('DELETE', `/v1/comments/${c.id}/reply`);
        await afterWrite();
      } }, t('reply.delete')));
    }
  }
  item.append(actions);
  return item;
}

/// "Helpful (n)": a toggle for a logged-in reader's vote on someone else's comment, the count alone
/// otherwise. The worker counts a vote within about a second; the button shows it at once.
function helpfulButton(c, viewer, canVote) {
  let voted = viewer.voted.get(c.id) ?? false;
  let count = c.helpfulCount;
  const label = () => `${t('helpful')} (${count})`;
  if (!canVote) return h('span', { class: 'helpful muted', title: `${count} ${t('helpful.count')}` }, label());
  const button = h('button', { type: 'button', class: 'helpful', 'aria-pressed': String(voted) }, label());
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const answer = await api(voted ? 'DELETE' : 'PUT', `/v1/comments/${c.id}/helpful`);
      count = voted ? Math.max(0, count - 1) : Math.max(count + 1, answer.helpfulCount);
      voted = !voted;
      viewer.voted.set(c.id, voted);
      button.setAttribute('aria-pressed', String(voted));
      button.textContent = label();
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

/// An owner's reply: written, or rewritten in place.
function replyForm(item, c, afterWrite) {
  if (item.querySelector('.reply-form')) return;
  const text = h('textarea', { class: 'reply-input', id: `reply-${c.id}`, required: true, maxlength: 1000, rows: 2 });
  text.value = c.reply?.text || '';
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h('form', { class: 'reply-form' }, h('label', { for: `reply-${c.id}` }, t('reply.text')), text, error,
    h('button', { type: 'submit' }, t('reply.send')),
    h('button', { type: 'button', onclick: () => form.remove() }, t('cancel')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api('PUT', `/v1/comments/${c.id}/reply`, { text: text.value });
      await afterWrite();
    } catch (e) {
      error.textContent = Object.values(e.fields || {})[0] || e.message;
    }
  });
  item.append(form);
  text.focus();
}

/// Reporting someone else's comment to the operators, with a reason (once per comment).
function reportForm(item, c, button) {
  button.disabled = true;
  const reason = h('input', { id: `report-reason-${c.id}`, name: 'reason', required: true, maxlength: 500 });
  const message = h('p', { class: 'report-message', role: 'status' });
  const form = h('form', { class: 'report-form' },
    h('label', { for: `report-reason-${c.id}` }, t('report.reason')), reason,
    h('button', { type: 'submit' }, t('report.send')), message);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api('POST', `/v1/comments/${c.id}/reports`, { reason: reason.value });
      form.replaceChildren(h('p', { class: 'report-message', role: 'status' }, t('report.done')));
    } catch (e) {
      message.textContent = e.code === 'already_reported' ? t('report.already') : (Object.values(e.fields || {})[0] || e.message);
    }
  });
  item.append(form);
  reason.focus();
}

function edit(item, c, afterWrite) {
  const detail = h('textarea', { class: 'edit-detail', required: true, maxlength: 2000, rows: 3, 'aria-label': t('review.detail') });
  detail.value = c.detail;
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h('form', { class: 'edit-form' }, starPicker(`star-${c.id}`, c.star), detail, error,
    h('button', { type: 'submit' }, t('save')),
    h('button', { type: 'button', onclick: () => afterWrite() }, t('cancel')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api('PATCH', `/v1/comments/${c.id}`, { detail: detail.value, star: Number(form[`star-${c.id}`].value) });
      await afterWrite();
    } catch (e) {
      error.textContent = Object.values(e.fields || {})[0] || e.message;
    }
  });
  item.replaceChildren(form);
  detail.focus();
}

/// The address, whether it is open now, and the week's hours in the cafe's own time zone (said when it
/// is not the reader's), with the special days still ahead.
function placeSection(cafe) {
  if (!cafe.address && !cafe.openingHours) return null;
  const note = hoursNote(cafe);
  const hours = cafe.openingHours;
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: cafe.timeZone || undefined }).format(new Date());
  const upcoming = (hours?.exceptions || []).filter((e) => e.date >= today);
  const readerZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return h('section', { class: 'place', id: 'cafe-place' },
    cafe.address ? h('p', { id: 'cafe-address' }, h('span', { class: 'muted' }, `${t('address')}: `), cafe.address) : null,
    note ? h('p', { id: 'cafe-open', class: cafe.openNow ? 'hours-note open' : 'hours-note' }, note) : null,
    hours ? h('div', {},
      h('h2', {}, t('hours.title')),
      h('table', { class: 'hours', id: 'cafe-hours' }, h('tbody', {}, weekdays.map((day) =>
        h('tr', { dataset: { day } }, h('th', { scope: 'row' }, t(day)), h('td', {}, intervalsText(hours[day]) || t('hours.closedDay')))))),
      upcoming.length ? h('div', { id: 'cafe-exceptions' }, h('h3', {}, t('hours.exceptions')),
        h('ul', {}, upcoming.map((e) => h('li', {}, `${e.date}: ${intervalsText(e.hours) || t('hours.closedDay')}`)))) : null,
      cafe.timeZone && cafe.timeZone !== readerZone ? h('p', { class: 'muted', id: 'cafe-zone' }, t('hours.zone').replace('{zone}', cafe.timeZone)) : null)
      : null);
}
