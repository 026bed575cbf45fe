-- The backups the worker and `cafe backup now` took with pgBackRest, as the console's jobs screen and
-- /metrics show them. A scheduled backup claims its day (`period`, days since 1970) so that of several
-- workers one takes it; a failed one gives its day back so that a later check retries. `window_start`
-- is the earliest point the repository could restore to after this backup (the end of its oldest
-- backup): the photo sweep keeps every object a row named after it.
CREATE TABLE backup_runs (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind         text        NOT NULL CHECK (kind IN ('full', 'diff')),
    period       bigint,
    worker       text        NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at  timestamptz,
    label        text,
    database_bytes   bigint,
    repository_bytes bigint,
    window_start timestamptz,
    error        text
);
CREATE UNIQUE INDEX backup_runs_period_idx ON backup_runs (period) WHERE period IS NOT NULL;
CREATE INDEX backup_runs_started_idx ON backup_runs (started_at);
