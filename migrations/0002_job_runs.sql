-- 0002: observability and scheduling of the aggregation worker.

-- One row per aggregation pass that did work, per reconcile, and per failure.
-- A scheduled reconcile claims its period with the unique (kind, period) index: of several workers,
-- exactly one inserts the row for a period and runs it.
CREATE TABLE job_runs (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind          text        NOT NULL CHECK (kind IN ('pass', 'reconcile')),
    period        bigint,                          -- scheduled reconciles: start of the period (epoch seconds)
    worker        text        NOT NULL,            -- host:pid of the process that ran it
    started_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at   timestamptz,
    outbox_rows   integer     NOT NULL DEFAULT 0,
    cafes_touched integer     NOT NULL DEFAULT 0,
    drift_found   integer,
    error         text
);
CREATE UNIQUE INDEX job_runs_kind_period_key ON job_runs (kind, period) WHERE period IS NOT NULL;
CREATE INDEX job_runs_started_at_idx ON job_runs (started_at DESC);

-- Reconciles asked for by an admin (POST /v1/admin/aggregates/reconcile); a worker takes each once.
CREATE TABLE reconcile_requests (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    requested_by bigint REFERENCES users (id) ON DELETE SET NULL,
    requested_at timestamptz NOT NULL DEFAULT now()
);
