// Building DOM without HTML strings: user text is always a text node, never markup.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/// Calls `fn` once input has paused for `ms`.
export function debounce(fn, ms) {
  let timer;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

const photoWidths = [160, 320, 640, 1280];

/// A photo as the browser should load it: `srcset` with the server's sizes (`?w=`, WebP where the
/// browser takes it) and `sizes` saying how wide it is shown, so a list loads thumbnails and only a
/// cafe's own page the large one; `width`/`height` so the page is laid out before it arrives.
export function photoImg(item, attrs = {}, shownWidth = '320px') {
  const url = item.imageUrl;
  return h('img', {
    ...attrs,
    src: `${url}?w=320`,
    srcset: photoWidths.map((w) => `${url}?w=${w} ${w}w`).join(', '),
    sizes: shownWidth,
    width: item.imageWidth ?? undefined,
    height: item.imageHeight ?? undefined,
    loading: 'lazy',
    decoding: 'async',
  });
}
