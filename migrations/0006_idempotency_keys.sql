-- 0006: idempotent writes. A POST carrying an Idempotency-Key (or, on /parse, the X-Parse-Request-Id
-- the SDKs send) inserts its row here in the same transaction as the write it performs and stores the
-- answer before committing. A retry finds the committed row and gets the same answer; a concurrent
-- duplicate waits on the primary key until the first commits (then replays) or rolls back (then runs).
CREATE TABLE idempotency_keys (
    user_id       bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key           text        NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
    request_hash  bytea       NOT NULL,           -- SHA-256 of method, path and body
    status        smallint,
    content_type  text,
    location      text,
    body          bytea,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key)
);
-- Keys are honoured for 24 hours; housekeeping deletes older ones.
CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at);
