// The aggregation worker as operators watch it: outbox lag, recent runs, the last reconcile and
// the drift it found, and a button asking for a reconcile; then the backups pgBackRest took and how
// WAL archiving is going. Refreshed every 2 s while open.
import { api } from './api.js';
import { h, replace } from './dom.js';
import { formatDate, t } from './i18n.js';
import { notice } from './admin.js';

const refreshEvery = 2000;

export async function jobsScreen(body) {
  const summary = h('dl', { class: 'summary', id: 'jobs-summary' });
  const rows = h('tbody', { id: 'job-runs' });
  const backupRows = h('tbody', { id: 'backup-runs' });
  const status = notice();
  const reconcile = h('button', { type: 'button', id: 'reconcile', onclick: async () => {
    await api('POST', '/v1/admin/aggregates/reconcile');
    status.textContent = t('admin.jobs.requested');
  } }, t('admin.jobs.reconcile'));
  replace(body, h('div', { class: 'admin-head' }, h('h1', {}, t('admin.tab.jobs')), reconcile), status, summary,
    h('div', { class: 'table-wrap' }, h('table', { class: 'admin-table' },
      h('thead', {}, h('tr', {}, ['admin.jobs.kind', 'admin.jobs.worker', 'admin.jobs.started', 'admin.jobs.duration',
        'admin.jobs.outboxRows', 'admin.jobs.cafes', 'admin.jobs.drift', 'admin.jobs.error'].map((key) => h('th', { scope: 'col' }, t(key))))),
      rows)),
    h('h2', {}, t('admin.jobs.backups')),
    h('div', { class: 'table-wrap' }, h('table', { class: 'admin-table' },
      h('thead', {}, h('tr', {}, ['admin.jobs.kind', 'admin.jobs.label', 'admin.jobs.worker', 'admin.jobs.started', 'admin.jobs.duration',
        'admin.jobs.size', 'admin.jobs.added', 'admin.jobs.error'].map((key) => h('th', { scope: 'col' }, t(key))))),
      backupRows)));
  const megabytes = (bytes) => (bytes == null ? '—' : `${(bytes / 1048576).toFixed(1)} MB`);

  async function refresh() {
    const jobs = await api('GET', '/v1/admin/jobs');
    const lastReconcile = jobs.runs.find((run) => run.kind === 'reconcile' && run.finishedAt);
    const lastPass = jobs.runs.find((run) => run.kind === 'pass' && run.finishedAt);
    const lastBackup = jobs.backups.find((run) => run.finishedAt && !run.error);
    const entry = (key, value, id) => [h('dt', {}, t(key)), h('dd', { id }, value)];
    summary.replaceChildren(
      ...entry('admin.jobs.outboxRows', String(jobs.outboxRows), 'jobs-outbox'),
      ...entry('admin.jobs.lag', `${jobs.lagSeconds.toFixed(1)} s`, 'jobs-lag'),
      ...entry('admin.jobs.photosToClean', String(jobs.photosToClean ?? 0), 'jobs-photos-to-clean'),
      ...entry('admin.jobs.lastPass', lastPass ? formatDate(lastPass.finishedAt) : '—', 'jobs-last-pass'),
      ...entry('admin.jobs.lastReconcile', lastReconcile
        ? `${formatDate(lastReconcile.finishedAt)} · ${t('admin.jobs.drift')}: ${lastReconcile.driftFound ?? 0}` : '—', 'jobs-last-reconcile'),
      ...entry('admin.jobs.lastBackup', lastBackup ? `${formatDate(lastBackup.finishedAt)} · ${lastBackup.kind}` : '—', 'jobs-last-backup'),
      ...entry('admin.jobs.archive', !jobs.archive ? t('admin.jobs.archiveOff')
        : jobs.archive.failing ? `${t('admin.jobs.archiveFailing')} · ${jobs.archive.lagSeconds} s` : t('admin.jobs.archiveOk'), 'jobs-archive'));
    backupRows.replaceChildren(...(jobs.backups.length ? jobs.backups.map((run) => h('tr', {},
      h('td', {}, run.kind), h('td', {}, run.label ?? ''), h('td', {}, run.worker), h('td', {}, formatDate(run.startedAt)),
      h('td', { class: 'number' }, run.finishedAt ? `${Math.round(Math.max(0, new Date(run.finishedAt) - new Date(run.startedAt)) / 1000)} s` : '…'),
      h('td', { class: 'number' }, megabytes(run.databaseBytes)), h('td', { class: 'number' }, megabytes(run.repositoryBytes)),
      h('td', { class: 'error' }, run.error ?? ''))) : [h('tr', {}, h('td', { colspan: 8 }, t('admin.jobs.noBackups')))]));
    rows.replaceChildren(...jobs.runs.map((run) => h('tr', {},
      h('td', {}, run.kind), h('td', {}, run.worker), h('td', {}, formatDate(run.startedAt)),
      h('td', { class: 'number' }, run.finishedAt ? `${Math.max(0, new Date(run.finishedAt) - new Date(run.startedAt))} ms` : '…'),
      h('td', { class: 'number' }, String(run.outboxRows ?? '—')), h('td', { class: 'number' }, String(run.cafesTouched ?? '—')),
      h('td', { class: 'number' }, String(run.driftFound ?? '—')), h('td', { class: 'error' }, run.error ?? ''))));
  }
  await refresh();
  // Stops by itself once the screen is gone (another tab, another page).
  const timer = setInterval(() => {
    if (!document.body.contains(summary)) { clearInterval(timer); return; }
    refresh().catch(() => {});
  }, refreshEvery);
}
