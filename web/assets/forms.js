// Forms of the account pages: labelled fields, API errors shown next to the field they name.
import { h } from './dom.js';
import { t } from './i18n.js';

/// A labelled input `${id}-${name}` with its error line; `label` defaults to the field's text.
export function field(id, name, type, autocomplete, { required = true, value, label } = {}) {
  const input = h('input', { id: `${id}-${name}`, name, type, required, autocomplete, value, 'aria-describedby': `${id}-${name}-error` });
  return h('div', { class: 'field' },
    h('label', { for: `${id}-${name}` }, label ?? t(name)), input,
    h('span', { class: 'field-error', id: `${id}-${name}-error`, role: 'alert' }));
}

/// Runs `submit(form)` on submission; an ApiError's field messages go next to their fields, the rest to `general`.
export function onSubmit(form, general, submit) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    for (const span of form.querySelectorAll('.field-error')) span.textContent = '';
    general.textContent = '';
    try {
      await submit(form);
    } catch (error) {
      let placed = false;
      for (const [name, message] of Object.entries(error.fields || {})) {
        const span = form.querySelector(`#${form.id}-${name}-error`);
        if (span) { span.textContent = message; placed = true; }
      }
      if (!placed) general.textContent = error.message;
    }
  });
}
