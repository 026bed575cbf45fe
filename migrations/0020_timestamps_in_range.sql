-- The times pages show (createdAt, updatedAt of accounts, cafes, comments and photos) stay within the
-- years 1-9999 UTC, which ISO-8601's four-digit years write and the service reads back: PostgreSQL
-- itself takes years up to 294276, and one such row (an import of `{"$date": 400000000000000}`)
-- made every page that showed it fail. A row already outside is brought to the nearest end first.
CREATE FUNCTION pg_temp.clamp_times(tbl regclass, cols text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    col text;
BEGIN
    FOREACH col IN ARRAY cols LOOP
        EXECUTE format('UPDATE %s SET %I = least(greatest(%I, %L::timestamptz), %L::timestamptz) '
                       'WHERE %I < %L::timestamptz OR %I >= %L::timestamptz',
                       tbl, col, col, '0001-01-01 00:00:00+00', '9999-12-31 23:59:59.999+00',
                       col, '0001-01-01 00:00:00+00', col, '10000-01-01 00:00:00+00');
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%I >= %L::timestamptz AND %I < %L::timestamptz)',
                       tbl, tbl::text || '_' || col || '_in_range', col, '0001-01-01 00:00:00+00', col, '10000-01-01 00:00:00+00');
    END LOOP;
END $$;

SELECT pg_temp.clamp_times('users', ARRAY['created_at', 'updated_at']);
SELECT pg_temp.clamp_times('cafes', ARRAY['created_at', 'updated_at']);
SELECT pg_temp.clamp_times('comments', ARRAY['created_at', 'updated_at']);
SELECT pg_temp.clamp_times('hidden_comments', ARRAY['created_at', 'updated_at']);
SELECT pg_temp.clamp_times('files', ARRAY['created_at']);
