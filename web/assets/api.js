// The /v1 API from the browser. The session token lives in localStorage, so a reload keeps you
// logged in; it is sent as a bearer token (never a cookie), so other sites cannot use it.
import { currentLanguage } from './i18n.js';

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem?.code;
    this.fields = Object.fromEntries((problem?.errors || []).map((e) => [e.field, e.message]));
  }
}

export const session = {
  get token() { return localStorage.getItem('token'); },
  get user() { try { return JSON.parse(localStorage.getItem('user')); } catch { return null; } },
  save(token, user) { localStorage.setItem('token', token); localStorage.setItem('user', JSON.stringify(user)); },
  clear() { localStorage.removeItem('token'); localStorage.removeItem('user'); },
};

// Read-your-writes behind read replicas: every write answers X-Commit-LSN; sending the newest one
// back as X-Min-LSN keeps later reads from a standby that has not replayed it (README, "Read replicas").
const position = (lsn) => { const [hi, lo] = lsn.split('/'); return BigInt(`0x${hi}`) * 4294967296n + BigInt(`0x${lo}`); };
function noteCommit(lsn) {
  if (!/^[0-9A-Fa-f]{1,8}\/[0-9A-Fa-f]{1,8}$/.test(lsn || '')) return;
  const seen = sessionStorage.getItem('minLSN');
  if (!seen || position(lsn) > position(seen)) sessionStorage.setItem('minLSN', lsn);
}

export async function api(method, path, body) {
  // Mails the request causes are written in the language the page is shown in.
  const headers = { 'Accept-Language': currentLanguage() };
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const minLSN = sessionStorage.getItem('minLSN');
  if (minLSN) headers['X-Min-LSN'] = minLSN;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  noteCommit(response.headers.get('X-Commit-LSN'));
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    if (response.status === 401 && session.token && !path.startsWith('/v1/sessions')) session.clear();
    throw new ApiError(response.status, data);
  }
  return data;
}

/// Uploads a photo with progress (fetch cannot report upload progress; XMLHttpRequest can).
export function uploadPhoto(file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/v1/files');
    xhr.setRequestHeader('Authorization', `Bearer ${session.token}`);
    xhr.setRequestHeader('Content-Type', file.type || 'application/octet-stream');
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      let data = null;
      try { data = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
      noteCommit(xhr.getResponseHeader('X-Commit-LSN'));
      if (xhr.status === 201) resolve(data); else reject(new ApiError(xhr.status, data));
    };
    xhr.onerror = () => reject(new ApiError(0, { detail: 'network error' }));
    xhr.send(file);
  });
}

/// The keywords as the server matches them: NFKC, lower-case, split on any white space (U+3000 too).
export function normalizedKeywords(q) {
  return q.normalize('NFKC').toLowerCase().split(/\s+/u).filter(Boolean);
}

/// A photo only its owner and the admins may see (a hidden comment's): `<img>` sends no bearer
/// token, so it is fetched with the session's and shown from a blob URL (the page's CSP allows blob: images).
export async function privatePhotoURL(url) {
  const response = await fetch(url, { headers: session.token ? { Authorization: `Bearer ${session.token}` } : {} });
  if (!response.ok) return null;
  return URL.createObjectURL(await response.blob());
}
