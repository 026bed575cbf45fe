import { h } from './dom.js';
import { counted, t } from './i18n.js';

/// ★★☆ for an average (or a single rating), with the number for screen readers and eyes.
export function stars(average, count) {
  if (average === null || average === undefined) return h('span', { class: 'stars muted' }, t('noRating'));
  const full = Math.round(average);
  const label = `${average.toFixed(2)} / 3`;
  return h('span', { class: 'stars', title: label },
    h('span', { 'aria-hidden': 'true' }, '★'.repeat(full) + '☆'.repeat(3 - full)),
    h('span', { class: 'stars-number' }, ` ${label}`),
    count === undefined ? null : h('span', { class: 'count' }, ` · ${counted(count, 'comments')}`));
}

/// One person's rating: ★★☆ and its name (まあまあ / おすすめ / プレミアム).
export function rating(star) {
  return h('span', { class: 'stars', title: `${star} / 3` },
    h('span', { 'aria-hidden': 'true' }, '★'.repeat(star) + '☆'.repeat(3 - star)),
    h('span', { class: 'comment-star-label' }, ` ${t(`star${star}`)}`));
}

/// The 1–3 star picker with the original app's labels: radio buttons in a fieldset, so it works
/// with a keyboard (arrows) and a screen reader.
export function starPicker(name, selected) {
  return h('fieldset', { class: 'star-picker' },
    h('legend', {}, t('review.star')),
    [1, 2, 3].map((n) => h('label', {},
      h('input', { type: 'radio', name, value: n, checked: n === selected, required: true }),
      h('span', { 'aria-hidden': 'true' }, '★'.repeat(n)), ` ${t(`star${n}`)}`)));
}

/// The stars by count as bars (3 on top), each with its count: how the comments spread, not only the mean.
export function starBars(counts, total) {
  return h('dl', { class: 'star-bars', id: 'star-bars', 'aria-label': t('bars.label') },
    [3, 2, 1].map((n) => {
      const count = counts?.[n] ?? 0;
      // A meter, not a styled span: the page's Content-Security-Policy allows no inline style.
      return h('div', { class: 'star-bar', dataset: { star: n } },
        h('dt', {}, '★'.repeat(n)),
        h('dd', {}, h('meter', { class: 'star-meter', min: 0, max: Math.max(total, 1), value: count }), h('span', { class: 'bar-count' }, String(count))));
    }));
}
