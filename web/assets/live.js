// Live updates: one Server-Sent Events stream for the view on screen (docs/api.md, "Live updates").
// EventSource reconnects by itself after a dropped connection, sending the last event's id; when the
// server refuses or ends the stream for good, this reconnects with backoff (1 s doubling to 30 s),
// saying where it was with ?lastEventId=, so no change is missed. Opening another view closes it.
let current = null;

export function stopWatching() {
  if (current) current.close();
  current = null;
}

/// Watches `path`; `handlers` maps event names (`comment.created`, `cafe.updated`, `reload`…) to
/// functions of the event's JSON data.
export function watch(path, handlers) {
  stopWatching();
  let source = null;
  let lastEventId = '';
  let delay = 1000;
  let closed = false;
  let timer = null;
  const watcher = { close() { closed = true; clearTimeout(timer); if (source) source.close(); } };
  current = watcher;

  function open() {
    if (closed) return;
    source = new EventSource(lastEventId ? `${path}?lastEventId=${encodeURIComponent(lastEventId)}` : path);
    source.onopen = () => { delay = 1000; };
    for (const [name, handle] of Object.entries(handlers)) {
      source.addEventListener(name, (event) => {
        if (event.lastEventId) lastEventId = event.lastEventId;
        handle(JSON.parse(event.data));
      });
    }
    // The server's last word before it ends a stream (too slow, stopping): come back with backoff.
    source.addEventListener('reconnect', () => { source.close(); retry(); });
    source.onerror = () => { if (source.readyState === EventSource.CLOSED) retry(); };
  }

  function retry() {
    if (closed) return;
    timer = setTimeout(open, delay);
    delay = Math.min(delay * 2, 30000);
  }

  open();
  return watcher;
}
