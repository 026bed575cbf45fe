-- 0005: what the Parse REST facade (/parse) needs.

-- Timestamps at millisecond precision, as Parse keeps them. A client pages with
-- `createdAt < last.createdAt` using the millisecond value it was shown; with microseconds stored,
-- rows within that millisecond would be skipped. timestamptz(3) rounds every value written,
-- whatever writes it (defaults, now(), bulk seeding), so no code path can forget.
ALTER TABLE users
    ALTER COLUMN created_at TYPE timestamptz(3),
    ALTER COLUMN updated_at TYPE timestamptz(3);
ALTER TABLE cafes
    ALTER COLUMN created_at TYPE timestamptz(3),
    ALTER COLUMN updated_at TYPE timestamptz(3);
ALTER TABLE cafe_stats
    ALTER COLUMN created_at TYPE timestamptz(3);
ALTER TABLE comments
    ALTER COLUMN created_at TYPE timestamptz(3),
    ALTER COLUMN updated_at TYPE timestamptz(3);
ALTER TABLE files
    ALTER COLUMN created_at TYPE timestamptz(3);

-- The name a Parse client gave an uploaded file (`POST /parse/files/{name}`); Parse file objects
-- carry it back. Files uploaded through /v1 have none.
ALTER TABLE files ADD COLUMN name text CHECK (char_length(name) <= 128);
