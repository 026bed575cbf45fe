-- Read-your-writes behind read replicas (DATABASE_READ_URLS): the WAL position of the last write
-- a session's client had committed. A read with that session goes to a standby only once the
-- standby has replayed that far, so apps that send no X-Min-LSN (the Parse SDKs) still see their
-- own writes. NULL: no write yet. Adding a nullable column rewrites nothing.
ALTER TABLE sessions ADD COLUMN last_write_lsn pg_lsn;
