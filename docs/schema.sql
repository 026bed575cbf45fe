-- The schema the migrations in migrations/ build (pg_dump --schema-only), kept by SchemaSnapshotTests.
-- Do not edit: add a migration, then rewrite this file (see the test).

CREATE EXTENSION IF NOT EXISTS postgis WITH SCHEMA public;

CREATE FUNCTION public.audit_is_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only' USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE FUNCTION public.cafe_bigrams(t text) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT array(SELECT DISTINCT substr(t, i, 2) FROM generate_series(1, char_length(t) - 1) AS i)
$$;

CREATE FUNCTION public.cafe_capped(ids bigint[], cap integer) RETURNS bigint[]
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
BEGIN
    IF cardinality(ids) > cap THEN
        RAISE EXCEPTION 'more than % cafes match', cap USING ERRCODE = 'program_limit_exceeded';
    END IF;
    RETURN ids;
END $$;

CREATE FUNCTION public.cafe_day_hours(hours jsonb, day date) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT coalesce(
        (SELECT e->'hours' FROM jsonb_array_elements(coalesce(hours->'exceptions', '[]')) e
         WHERE e->>'date' = to_char(day, 'YYYY-MM-DD') LIMIT 1),
        hours->((ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'])[extract(isodow FROM day)::int]),
        '[]')
$$;

CREATE FUNCTION public.cafe_exception_days(hours jsonb) RETURNS daterange
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
BEGIN
    IF coalesce(jsonb_array_length(hours -> 'exceptions'), 0) = 0 THEN RETURN NULL; END IF;
    RETURN (SELECT daterange(min((e->>'date')::date), max((e->>'date')::date), '[]') FROM jsonb_array_elements(hours -> 'exceptions') e);
END $$;

CREATE FUNCTION public.cafe_hours_regular(exceptions daterange, zone text, moment timestamp with time zone) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN (((exceptions IS NULL) OR (NOT (exceptions && daterange((((moment AT TIME ZONE zone))::date - 1), (((moment AT TIME ZONE zone))::date + 10))))) AND ((((moment + '9 days'::interval) AT TIME ZONE zone) - ((moment - '1 day'::interval) AT TIME ZONE zone)) = '10 days'::interval));

CREATE FUNCTION public.cafe_keyword_grams(normalized text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE WHEN char_length(normalized) = 0 THEN '{}'::text[]
                WHEN char_length(normalized) <= 2 THEN ARRAY[normalized]
                ELSE cafe_bigrams(normalized) END
$$;

CREATE FUNCTION public.cafe_like_pattern(keyword text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT '%' || replace(replace(replace(keyword, '\', '\\'), '%', '\%'), '_', '\_') || '%'
$$;

CREATE FUNCTION public.cafe_next_change(hours jsonb, week int4multirange, exceptions daterange, zone text, moment timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    AS $$
DECLARE
    minute int;
    current int4range;
    target int;
    span tstzrange;
    horizon timestamptz := moment + interval '8 days';
BEGIN
    IF hours IS NULL THEN RETURN NULL; END IF;
    IF NOT cafe_hours_regular(exceptions, zone, moment) THEN
        SELECT s INTO span
        FROM unnest(cafe_open_spans(hours, zone, (moment AT TIME ZONE zone)::date - 1, (moment AT TIME ZONE zone)::date + 9)) s
        WHERE upper(s) > moment ORDER BY lower(s) LIMIT 1;
        IF span IS NULL THEN RETURN NULL; END IF;
        RETURN (SELECT t FROM (SELECT CASE WHEN span @> moment THEN upper(span) ELSE lower(span) END AS t) c WHERE t <= horizon);
    END IF;
    minute := cafe_week_minute(zone, moment);
    SELECT s INTO current FROM unnest(week) s WHERE s @> minute;
    IF current IS NOT NULL THEN
        target := upper(current);
        IF target = 10080 THEN
            IF lower(current) = 0 THEN RETURN NULL; END IF;   -- open all week
            target := 10080 + coalesce((SELECT upper(s) FROM unnest(week) s WHERE lower(s) = 0), 0);
        END IF;
    ELSE
        target := coalesce((SELECT min(lower(s)) FROM unnest(week) s WHERE lower(s) > minute),
                           (SELECT min(lower(s)) + 10080 FROM unnest(week) s));
        IF target IS NULL THEN RETURN NULL; END IF;   -- closed all week
    END IF;
    RETURN (date_trunc('week', moment AT TIME ZONE zone) + target * interval '1 minute') AT TIME ZONE zone;
END $$;

CREATE FUNCTION public.cafe_open_spans(hours jsonb, zone text, first_day date, last_day date) RETURNS tstzmultirange
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT coalesce(range_agg(tstzrange(o.opens, greatest(o.opens, o.closes))), '{}')
    FROM generate_series(first_day::timestamp, last_day::timestamp, interval '1 day') AS d(day),
         jsonb_array_elements(cafe_day_hours(hours, d.day::date)) AS i(span),
         LATERAL (SELECT (i.span->>0)::interval AS starts, (i.span->>1)::interval AS ends) t,
         -- A local time a daylight-saving change skips can put an end before its start: an empty span.
         LATERAL (SELECT (d.day + t.starts) AT TIME ZONE zone AS opens,
                         (d.day + t.ends + CASE WHEN t.ends <= t.starts THEN interval '1 day' ELSE interval '0' END) AT TIME ZONE zone AS closes) o
$$;

CREATE FUNCTION public.cafe_week_minute(zone text, moment timestamp with time zone) RETURNS integer
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN (floor((EXTRACT(epoch FROM ((moment AT TIME ZONE zone) - date_trunc('week'::text, (moment AT TIME ZONE zone)))) / (60)::numeric)))::integer;

CREATE FUNCTION public.cafe_open_at(hours jsonb, week int4multirange, exceptions daterange, zone text, moment timestamp with time zone) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN CASE WHEN (hours IS NULL) THEN NULL::boolean WHEN public.cafe_hours_regular(exceptions, zone, moment) THEN (week @> public.cafe_week_minute(zone, moment)) ELSE (public.cafe_open_spans(hours, zone, (((moment AT TIME ZONE zone))::date - 1), ((moment AT TIME ZONE zone))::date) @> moment) END;

CREATE FUNCTION public.cafe_popularity_floors(comments integer) RETURNS integer[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ARRAY(SELECT (1 << (2 * k.k)) FROM generate_series(2, 15) k(k) WHERE ((1 << (2 * k.k)) <= cafe_popularity_floors.comments) ORDER BY k.k);

CREATE FUNCTION public.cafe_short_grams(t text) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    SELECT array(SELECT DISTINCT g FROM (SELECT unnest(c) AS g UNION ALL SELECT unnest(c[1:n - 1]) || unnest(c[2:n])) grams)
    FROM (SELECT c, cardinality(c) AS n FROM (SELECT string_to_array(t, NULL) AS c) chars) split
$$;

CREATE FUNCTION public.cafe_stats_popularity_moved() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE ids bigint[]; floors integer[]; reached boolean[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(n.cafe_id), array_agg(f), array_agg(true) INTO ids, floors, reached
        FROM new_stats n, unnest(cafe_popularity_floors(n.comment_sum)) AS f
        WHERE n.comment_sum >= 16;
    ELSE
        -- The floors between the two counts: reached when the new count is at or above them.
        SELECT array_agg(n.cafe_id), array_agg(f), array_agg(f <= n.comment_sum) INTO ids, floors, reached
        FROM old_stats o JOIN new_stats n USING (cafe_id), unnest(cafe_popularity_floors(greatest(o.comment_sum, n.comment_sum))) AS f
        WHERE o.comment_sum <> n.comment_sum AND greatest(o.comment_sum, n.comment_sum) >= 16 AND f > least(o.comment_sum, n.comment_sum);
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtext('popularity_bitmaps'));
        PERFORM popularity_bitmaps_apply(ids, floors, reached);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION public.cafe_week_minutes(hours jsonb) RETURNS int4multirange
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
DECLARE
    days CONSTANT text[] := ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
    spans int4range[] := '{}';
    intervals jsonb;
    starts text;
    ends text;
    lo int;
    hi int;
BEGIN
    IF hours IS NULL THEN RETURN NULL; END IF;
    FOR n IN 0..6 LOOP
        intervals := hours -> days[n + 1];
        CONTINUE WHEN intervals IS NULL;
        FOR i IN 0 .. jsonb_array_length(intervals) - 1 LOOP
            starts := intervals -> i ->> 0;
            ends := intervals -> i ->> 1;
            lo := n * 1440 + substr(starts, 1, 2)::int * 60 + substr(starts, 4, 2)::int;
            hi := n * 1440 + substr(ends, 1, 2)::int * 60 + substr(ends, 4, 2)::int;
            IF hi <= lo THEN hi := hi + 1440; END IF;
            spans := spans || int4range(lo, least(hi, 10080));
            IF hi > 10080 THEN spans := spans || int4range(0, hi - 10080); END IF;
        END LOOP;
    END LOOP;
    RETURN int4multirange(VARIADIC spans);
END $$;

CREATE FUNCTION public.cafes_bitmaps_deleted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE ids bigint[]; grams text[];
BEGIN
    SELECT array_agg(o.id), array_agg(g.gram) INTO ids, grams
    FROM old_cafes o, unnest(o.search_grams) AS u(gram) JOIN search_bitmap_grams g USING (gram);
    IF ids IS NOT NULL THEN
        PERFORM search_bitmaps_apply('{}', '{}', ids, grams);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION public.cafes_bitmaps_inserted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE ids bigint[]; grams text[];
BEGIN
    SELECT array_agg(n.id), array_agg(g.gram) INTO ids, grams
    FROM new_cafes n, unnest(n.search_grams) AS u(gram) JOIN search_bitmap_grams g USING (gram);
    IF ids IS NOT NULL THEN
        PERFORM search_bitmaps_apply(ids, grams, '{}', '{}');
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION public.cafes_bitmaps_updated() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE set_ids bigint[]; set_grams text[]; clear_ids bigint[]; clear_grams text[];
BEGIN
    SELECT array_agg(n.id), array_agg(g.gram) INTO set_ids, set_grams
    FROM new_cafes n JOIN old_cafes o ON o.id = n.id, unnest(n.search_grams) AS u(gram) JOIN search_bitmap_grams g USING (gram)
    WHERE o.search_grams IS DISTINCT FROM n.search_grams AND NOT g.gram = ANY(o.search_grams);
    SELECT array_agg(o.id), array_agg(g.gram) INTO clear_ids, clear_grams
    FROM old_cafes o JOIN new_cafes n ON n.id = o.id, unnest(o.search_grams) AS u(gram) JOIN search_bitmap_grams g USING (gram)
    WHERE o.search_grams IS DISTINCT FROM n.search_grams AND NOT g.gram = ANY(n.search_grams);
    IF set_ids IS NOT NULL OR clear_ids IS NOT NULL THEN
        PERFORM search_bitmaps_apply(coalesce(set_ids, '{}'), coalesce(set_grams, '{}'), coalesce(clear_ids, '{}'), coalesce(clear_grams, '{}'));
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION public.cafes_copy_search_text() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE cafe_stats s SET search_text = n.search_text
    FROM new_cafes n WHERE s.cafe_id = n.id AND s.search_text IS DISTINCT FROM n.search_text;
    RETURN NULL;
END $$;

CREATE FUNCTION public.cafes_create_stats() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO cafe_stats (cafe_id, created_at, search_text) SELECT id, created_at, search_text FROM new_cafes;
    RETURN NULL;
END $$;

CREATE FUNCTION public.cafes_keep_opening_week() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.opening_week := cafe_week_minutes(NEW.opening_hours);
    NEW.opening_exceptions := cafe_exception_days(NEW.opening_hours);
    RETURN NEW;
END $$;

CREATE FUNCTION public.comment_votes_gone() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM comments WHERE id = OLD.id) AND NOT EXISTS (SELECT 1 FROM hidden_comments WHERE id = OLD.id) THEN
        DELETE FROM helpful_votes WHERE comment_id = OLD.id;
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION public.comments_enqueue_deleted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO aggregation_outbox (cafe_id) SELECT cafe_id FROM old_comments;
    RETURN NULL;
END $$;

CREATE FUNCTION public.comments_enqueue_inserted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO aggregation_outbox (cafe_id) SELECT cafe_id FROM new_comments;
    RETURN NULL;
END $$;

CREATE FUNCTION public.comments_enqueue_updated() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO aggregation_outbox (cafe_id)
    SELECT o.cafe_id FROM old_comments o JOIN new_comments n ON n.id = o.id
    WHERE o.star <> n.star OR o.cafe_id <> n.cafe_id
    UNION ALL
    SELECT n.cafe_id FROM old_comments o JOIN new_comments n ON n.id = o.id
    WHERE o.cafe_id <> n.cafe_id;
    RETURN NULL;
END $$;

CREATE FUNCTION public.helpful_votes_enqueue() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO helpful_outbox (comment_id) SELECT DISTINCT comment_id FROM changed_votes;
    RETURN NULL;
END $$;

CREATE FUNCTION public.live_cafe_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- A record's fields are resolved when a statement runs: each table's column is named in its own branch.
    IF TG_OP = 'DELETE' THEN
        PERFORM live_record('cafe', 'removed', OLD.cafe_id, NULL, NULL);
    ELSIF TG_TABLE_NAME = 'cafes' THEN
        PERFORM live_record('cafe', 'updated', NEW.id, NULL, NULL);
    ELSE
        PERFORM live_record('cafe', 'updated', NEW.cafe_id, NULL, NULL);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION public.live_comment_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM live_record('comment', CASE WHEN NEW.created_at = now()::timestamptz(3) THEN 'created' ELSE 'appeared' END, NEW.cafe_id, NEW.id, NULL);
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM live_record('comment', 'updated', NEW.cafe_id, NEW.id, to_jsonb(OLD));
        IF NEW.cafe_id <> OLD.cafe_id THEN
            PERFORM live_record('comment', 'removed', OLD.cafe_id, OLD.id, to_jsonb(OLD));
        END IF;
    ELSE
        PERFORM live_record('comment', 'removed', OLD.cafe_id, OLD.id, to_jsonb(OLD));
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION public.live_feed_enabled() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(current_setting('cafe.live_feed', true), '') <> 'off'
$$;

CREATE FUNCTION public.live_record(subject text, op text, cafe_id bigint, comment_id bigint, previous jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('cafe_live_feed'));
    INSERT INTO live_changes (seq, subject, op, cafe_id, comment_id, previous)
    VALUES (nextval('live_changes_seq'), subject, op, cafe_id, comment_id, previous);
    PERFORM pg_notify('cafe_live', '');
END $$;

CREATE FUNCTION public.note_object_deletion() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO object_deletions (object_key)
    SELECT object_key FROM gone WHERE object_key IS NOT NULL
    ON CONFLICT (object_key) DO UPDATE SET due_at = now();
    RETURN NULL;
END $$;

CREATE FUNCTION public.notify_all_sessions() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM notify_session_users('*');
    RETURN NULL;
END $$;

CREATE FUNCTION public.notify_changed_users() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM notify_session_users((SELECT CASE WHEN count(*) > 100 THEN '*' ELSE string_agg(id::text, ',') END
                                  FROM (SELECT DISTINCT id FROM changed LIMIT 101) c));
    RETURN NULL;
END $$;

CREATE FUNCTION public.notify_ended_sessions() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM notify_session_users((SELECT CASE WHEN count(*) > 100 THEN '*' ELSE string_agg(user_id::text, ',') END
                                  FROM (SELECT DISTINCT user_id FROM ended WHERE expires_at > now() LIMIT 101) e));
    RETURN NULL;
END $$;

CREATE FUNCTION public.notify_moved_session() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM notify_session_users(OLD.user_id::text);
    IF NEW.user_id <> OLD.user_id THEN PERFORM notify_session_users(NEW.user_id::text); END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION public.notify_page_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('cafe_pages', TG_ARGV[0]);
    RETURN NULL;
END $$;

CREATE FUNCTION public.notify_session_users(ids text) RETURNS void
    LANGUAGE sql
    AS $$
    SELECT pg_notify('cafe_sessions', ids) WHERE ids IS NOT NULL
$$;

CREATE FUNCTION public.popularity_bitmaps_apply(ids bigint[], floors integer[], reached boolean[]) RETURNS void
    LANGUAGE sql
    AS $$
    WITH delta AS (
        SELECT floor, (id / 30720)::integer AS chunk,
               coalesce(bit_or(set_bit(B'0'::bit(30720), (id % 30720)::integer, 1)) FILTER (WHERE r), B'0'::bit(30720)) AS set_bits,
               coalesce(bit_or(set_bit(B'0'::bit(30720), (id % 30720)::integer, 1)) FILTER (WHERE NOT r), B'0'::bit(30720)) AS clear_bits
        FROM unnest(ids, floors, reached) AS m(id, floor, r)
        GROUP BY 1, 2
    )
    INSERT INTO popularity_bitmaps AS p (floor, chunk, bits)
    SELECT floor, chunk, set_bits FROM delta ORDER BY floor, chunk
    ON CONFLICT (floor, chunk) DO UPDATE
    SET bits = (p.bits & ~(SELECT d.clear_bits FROM delta d WHERE d.floor = EXCLUDED.floor AND d.chunk = EXCLUDED.chunk)) | EXCLUDED.bits
$$;

CREATE FUNCTION public.popularity_bitmaps_rebuild() RETURNS void
    LANGUAGE sql
    AS $$
    LOCK TABLE cafe_stats IN SHARE MODE;
    DELETE FROM popularity_bitmaps;
    INSERT INTO popularity_bitmaps (floor, chunk, bits)
    SELECT f, (s.cafe_id / 30720)::integer, bit_or(set_bit(B'0'::bit(30720), (s.cafe_id % 30720)::integer, 1))
    FROM cafe_stats s, unnest(cafe_popularity_floors(s.comment_sum)) AS f
    WHERE s.comment_sum >= 16
    GROUP BY 1, 2;
$$;

CREATE FUNCTION public.rating_score(amount integer, n integer, mean numeric, weight integer) RETURNS numeric
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN (n > 0) THEN round((((amount)::numeric + ((weight)::numeric * mean)) / ((n + weight))::numeric), 6) ELSE NULL::numeric END;

CREATE FUNCTION public.search_bitmaps_apply(set_ids bigint[], set_grams text[], clear_ids bigint[], clear_grams text[]) RETURNS void
    LANGUAGE sql
    AS $$
    WITH delta AS (
        SELECT gram, chunk,
               coalesce(bit_or(bits) FILTER (WHERE setting), B'0'::bit(30720)) AS set_bits,
               coalesce(bit_or(bits) FILTER (WHERE NOT setting), B'0'::bit(30720)) AS clear_bits
        FROM (
            SELECT p.gram, (p.id / 30720)::integer AS chunk, set_bit(B'0'::bit(30720), (p.id % 30720)::integer, 1) AS bits, p.setting
            FROM (SELECT i, g, true FROM unnest(set_ids, set_grams) AS s(i, g)
                  UNION ALL SELECT i, g, false FROM unnest(clear_ids, clear_grams) AS c(i, g)) AS p(id, gram, setting)
        ) pairs
        GROUP BY gram, chunk
    )
    INSERT INTO search_gram_bitmaps AS b (gram, chunk, bits)
    SELECT gram, chunk, set_bits FROM delta ORDER BY gram, chunk
    ON CONFLICT (gram, chunk) DO UPDATE
    SET bits = (b.bits & ~(SELECT d.clear_bits FROM delta d WHERE d.gram = EXCLUDED.gram AND d.chunk = EXCLUDED.chunk)) | EXCLUDED.bits
$$;

CREATE FUNCTION public.set_aside_indexes_of(tables regclass[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE found record;
BEGIN
    FOR found IN SELECT i.indexrelid::regclass AS index, pg_get_indexdef(i.indexrelid) AS definition,
                        pg_table_size(i.indrelid) AS table_bytes
                 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am m ON m.oid = c.relam
                 WHERE i.indrelid = ANY (tables) AND NOT i.indisunique AND NOT i.indisprimary AND NOT i.indisexclusion
                       AND m.amname <> 'gin'
    LOOP
        INSERT INTO set_aside_indexes (name, definition, table_bytes) VALUES (found.index::text, found.definition, found.table_bytes);
        EXECUTE format('DROP INDEX %s', found.index);
    END LOOP;
END $$;

CREATE FUNCTION public.users_block_recounts_votes() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO helpful_outbox (comment_id) SELECT comment_id FROM helpful_votes WHERE user_id = NEW.id;
    RETURN NULL;
END $$;

CREATE TABLE public.account_tokens (
    token_hash bytea NOT NULL,
    user_id bigint NOT NULL,
    purpose text NOT NULL,
    email text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    mail_id bigint,
    CONSTRAINT account_tokens_purpose_check CHECK ((purpose = ANY (ARRAY['password_reset'::text, 'email_verification'::text])))
);

CREATE TABLE public.aggregation_outbox (
    id bigint NOT NULL,
    cafe_id bigint NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

ALTER TABLE public.aggregation_outbox ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.aggregation_outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.app_secrets (
    name text NOT NULL,
    value bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.audit_changes (
    audit_id bigint NOT NULL,
    field text NOT NULL,
    before text,
    after text
);

CREATE TABLE public.audit_log (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor_id bigint NOT NULL,
    action text NOT NULL,
    object_type text NOT NULL,
    object_id text NOT NULL,
    address text,
    CONSTRAINT audit_log_address_check CHECK ((char_length(address) <= 64))
);

ALTER TABLE public.audit_log ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.audit_log_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.backup_runs (
    id bigint NOT NULL,
    kind text NOT NULL,
    period bigint,
    worker text NOT NULL,
    started_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    finished_at timestamp with time zone,
    label text,
    database_bytes bigint,
    repository_bytes bigint,
    window_start timestamp with time zone,
    error text,
    CONSTRAINT backup_runs_kind_check CHECK ((kind = ANY (ARRAY['full'::text, 'diff'::text])))
);

ALTER TABLE public.backup_runs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.backup_runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.cafe_owners (
    cafe_id bigint NOT NULL,
    user_id bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.cafe_stats (
    cafe_id bigint NOT NULL,
    comment_sum integer DEFAULT 0 NOT NULL,
    comment_amount integer DEFAULT 0 NOT NULL,
    created_at timestamp(3) with time zone NOT NULL,
    average_star numeric(3,2) GENERATED ALWAYS AS (
CASE
    WHEN (comment_sum > 0) THEN round(((comment_amount)::numeric / (comment_sum)::numeric), 2)
    ELSE NULL::numeric
END) STORED,
    search_text text NOT NULL,
    stars_1 integer DEFAULT 0 NOT NULL,
    stars_2 integer DEFAULT 0 NOT NULL,
    stars_3 integer DEFAULT 0 NOT NULL,
    rating_score_0 numeric(7,6),
    rating_score_1 numeric(7,6),
    CONSTRAINT cafe_stats_comment_amount_check CHECK ((comment_amount >= 0)),
    CONSTRAINT cafe_stats_comment_sum_check CHECK ((comment_sum >= 0)),
    CONSTRAINT cafe_stats_stars_add_up CHECK (((stars_1 >= 0) AND (stars_2 >= 0) AND (stars_3 >= 0) AND (((stars_1 + stars_2) + stars_3) = comment_sum) AND (((stars_1 + (2 * stars_2)) + (3 * stars_3)) = comment_amount)))
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_threshold='1000', autovacuum_vacuum_insert_scale_factor='0.01');

CREATE TABLE public.cafes (
    id bigint NOT NULL,
    name text NOT NULL,
    catch_copy text DEFAULT ''::text NOT NULL,
    introduction text DEFAULT ''::text NOT NULL,
    image_id bigint,
    publish_date text,
    created_at timestamp(3) with time zone DEFAULT now() NOT NULL,
    updated_at timestamp(3) with time zone DEFAULT now() NOT NULL,
    search_text text GENERATED ALWAYS AS (lower(NORMALIZE(((((name || '
'::text) || catch_copy) || '
'::text) || introduction), NFKC))) STORED,
    search_grams text[] GENERATED ALWAYS AS (public.cafe_short_grams(lower(NORMALIZE(((((name || '
'::text) || catch_copy) || '
'::text) || introduction), NFKC)))) STORED,
    archived_at timestamp with time zone,
    location public.geography(Point,4326),
    address text,
    time_zone text,
    opening_hours jsonb,
    opening_week int4multirange,
    opening_exceptions daterange,
    CONSTRAINT cafes_address_check CHECK ((char_length(address) <= 300)),
    CONSTRAINT cafes_catch_copy_check CHECK ((char_length(catch_copy) <= 200)),
    CONSTRAINT cafes_created_at_in_range CHECK (((created_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (created_at < '10000-01-01 00:00:00+00'::timestamp with time zone))),
    CONSTRAINT cafes_hours_need_zone CHECK (((opening_hours IS NULL) OR (time_zone IS NOT NULL))),
    CONSTRAINT cafes_introduction_check CHECK ((char_length(introduction) <= 5000)),
    CONSTRAINT cafes_name_check CHECK (((char_length(name) >= 1) AND (char_length(name) <= 100))),
    CONSTRAINT cafes_updated_at_in_range CHECK (((updated_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (updated_at < '10000-01-01 00:00:00+00'::timestamp with time zone)))
);
ALTER TABLE ONLY public.cafes ALTER COLUMN search_grams SET STATISTICS 1000;

ALTER TABLE public.cafes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.cafes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.comment_reports (
    comment_id bigint NOT NULL,
    user_id bigint,
    reason text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    resolved_at timestamp with time zone,
    resolution text,
    CONSTRAINT comment_reports_check CHECK (((resolved_at IS NULL) = (resolution IS NULL))),
    CONSTRAINT comment_reports_reason_check CHECK (((char_length(reason) >= 1) AND (char_length(reason) <= 500))),
    CONSTRAINT comment_reports_resolution_check CHECK ((resolution = ANY (ARRAY['hidden'::text, 'dismissed'::text])))
);

CREATE TABLE public.comments (
    id bigint NOT NULL,
    cafe_id bigint NOT NULL,
    user_id bigint NOT NULL,
    detail text NOT NULL,
    star smallint NOT NULL,
    image_id bigint,
    created_at timestamp(3) with time zone DEFAULT now() NOT NULL,
    updated_at timestamp(3) with time zone DEFAULT now() NOT NULL,
    helpful_count integer DEFAULT 0 NOT NULL,
    reply_text text,
    reply_by bigint,
    reply_created_at timestamp(3) with time zone,
    reply_updated_at timestamp(3) with time zone,
    reply_hidden_at timestamp with time zone,
    CONSTRAINT comments_created_at_in_range CHECK (((created_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (created_at < '10000-01-01 00:00:00+00'::timestamp with time zone))),
    CONSTRAINT comments_detail_check CHECK (((char_length(detail) >= 1) AND (char_length(detail) <= 2000))),
    CONSTRAINT comments_helpful_count_check CHECK ((helpful_count >= 0)),
    CONSTRAINT comments_reply_text_check CHECK (((char_length(reply_text) >= 1) AND (char_length(reply_text) <= 1000))),
    CONSTRAINT comments_reply_whole CHECK ((((reply_text IS NULL) = (reply_created_at IS NULL)) AND ((reply_text IS NULL) = (reply_updated_at IS NULL)) AND ((reply_hidden_at IS NULL) OR (reply_text IS NOT NULL)))),
    CONSTRAINT comments_star_check CHECK (((star >= 1) AND (star <= 3))),
    CONSTRAINT comments_updated_at_in_range CHECK (((updated_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (updated_at < '10000-01-01 00:00:00+00'::timestamp with time zone)))
);

ALTER TABLE public.comments ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.comments_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.file_sizes (
    file_id bigint NOT NULL,
    width integer NOT NULL,
    encoding text NOT NULL,
    height integer NOT NULL,
    size integer NOT NULL,
    sha256 bytea NOT NULL,
    bytes bytea,
    object_key text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT file_sizes_check CHECK (((bytes IS NULL) <> (object_key IS NULL))),
    CONSTRAINT file_sizes_encoding_check CHECK ((encoding = ANY (ARRAY['jpeg'::text, 'png'::text, 'webp'::text]))),
    CONSTRAINT file_sizes_height_check CHECK ((height > 0)),
    CONSTRAINT file_sizes_size_check CHECK ((size >= 0)),
    CONSTRAINT file_sizes_width_check CHECK ((width > 0))
);

CREATE TABLE public.files (
    id bigint NOT NULL,
    owner_id bigint,
    content_type text NOT NULL,
    size integer NOT NULL,
    sha256 bytea NOT NULL,
    bytes bytea,
    created_at timestamp(3) with time zone DEFAULT now() NOT NULL,
    name text,
    width integer,
    height integer,
    cleaned_at timestamp with time zone,
    object_key text,
    uploaded_from text,
    CONSTRAINT files_bytes_somewhere CHECK (((bytes IS NULL) <> (object_key IS NULL))),
    CONSTRAINT files_cleaned_has_size CHECK (((cleaned_at IS NULL) OR ((width IS NOT NULL) AND (height IS NOT NULL)))),
    CONSTRAINT files_created_at_in_range CHECK (((created_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (created_at < '10000-01-01 00:00:00+00'::timestamp with time zone))),
    CONSTRAINT files_height_check CHECK ((height > 0)),
    CONSTRAINT files_name_check CHECK ((char_length(name) <= 128)),
    CONSTRAINT files_size_check CHECK ((size >= 0)),
    CONSTRAINT files_uploaded_from_check CHECK ((char_length(uploaded_from) <= 64)),
    CONSTRAINT files_width_check CHECK ((width > 0))
);

ALTER TABLE public.files ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.files_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.helpful_outbox (
    id bigint NOT NULL,
    comment_id bigint NOT NULL
);

ALTER TABLE public.helpful_outbox ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.helpful_outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.helpful_votes (
    comment_id bigint NOT NULL,
    user_id bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.hidden_comments (
    id bigint NOT NULL,
    cafe_id bigint NOT NULL,
    user_id bigint NOT NULL,
    detail text NOT NULL,
    star smallint NOT NULL,
    image_id bigint,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    hidden_at timestamp with time zone DEFAULT now() NOT NULL,
    cause text NOT NULL,
    helpful_count integer DEFAULT 0 NOT NULL,
    reply_text text,
    reply_by bigint,
    reply_created_at timestamp(3) with time zone,
    reply_updated_at timestamp(3) with time zone,
    reply_hidden_at timestamp with time zone,
    CONSTRAINT hidden_comments_cause_check CHECK ((cause = ANY (ARRAY['moderation'::text, 'block'::text, 'archive'::text]))),
    CONSTRAINT hidden_comments_created_at_in_range CHECK (((created_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (created_at < '10000-01-01 00:00:00+00'::timestamp with time zone))),
    CONSTRAINT hidden_comments_updated_at_in_range CHECK (((updated_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (updated_at < '10000-01-01 00:00:00+00'::timestamp with time zone)))
);

CREATE TABLE public.idempotency_keys (
    user_id bigint NOT NULL,
    key text NOT NULL,
    request_hash bytea NOT NULL,
    status smallint,
    content_type text,
    location text,
    body bytea,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT idempotency_keys_key_check CHECK (((char_length(key) >= 1) AND (char_length(key) <= 255)))
);

CREATE TABLE public.job_runs (
    id bigint NOT NULL,
    kind text NOT NULL,
    period bigint,
    worker text NOT NULL,
    started_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    finished_at timestamp with time zone,
    outbox_rows integer DEFAULT 0 NOT NULL,
    cafes_touched integer DEFAULT 0 NOT NULL,
    drift_found integer,
    error text,
    CONSTRAINT job_runs_kind_check CHECK ((kind = ANY (ARRAY['pass'::text, 'votes'::text, 'reconcile'::text, 'clean-photos'::text])))
);

ALTER TABLE public.job_runs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.job_runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.live_changes (
    seq bigint NOT NULL,
    subject text NOT NULL,
    op text NOT NULL,
    cafe_id bigint NOT NULL,
    comment_id bigint,
    previous jsonb,
    recorded_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT live_changes_op_check CHECK ((op = ANY (ARRAY['created'::text, 'appeared'::text, 'updated'::text, 'removed'::text]))),
    CONSTRAINT live_changes_subject_check CHECK ((subject = ANY (ARRAY['comment'::text, 'cafe'::text])))
);

CREATE SEQUENCE public.live_changes_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

CREATE TABLE public.live_feed_pruned (
    one boolean DEFAULT true NOT NULL,
    through bigint NOT NULL,
    CONSTRAINT live_feed_pruned_one_check CHECK (one)
);

CREATE TABLE public.login_failures (
    username_key text NOT NULL,
    failed_at timestamp with time zone DEFAULT now() NOT NULL,
    address text DEFAULT ''::text NOT NULL
);

CREATE TABLE public.mail_outbox (
    id bigint NOT NULL,
    kind text NOT NULL,
    recipient text NOT NULL,
    user_id bigint,
    language text NOT NULL,
    base_url text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    subject text,
    body text,
    expires_at timestamp with time zone,
    state text DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    last_error text,
    finished_at timestamp with time zone,
    comment_id bigint,
    CONSTRAINT mail_outbox_base_url_check CHECK ((char_length(base_url) <= 512)),
    CONSTRAINT mail_outbox_finished CHECK (((state = 'pending'::text) = (finished_at IS NULL))),
    CONSTRAINT mail_outbox_kind_check CHECK ((kind = ANY (ARRAY['password_reset'::text, 'email_verification'::text, 'owner_reply'::text]))),
    CONSTRAINT mail_outbox_language_check CHECK ((language = ANY (ARRAY['ja'::text, 'en'::text]))),
    CONSTRAINT mail_outbox_recipient_check CHECK ((char_length(recipient) <= 254)),
    CONSTRAINT mail_outbox_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'sent'::text, 'kept'::text, 'skipped'::text, 'throttled'::text, 'failed'::text, 'expired'::text])))
);

ALTER TABLE public.mail_outbox ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.mail_outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.object_deletions (
    object_key text NOT NULL,
    due_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.parse_object_ids (
    kind text NOT NULL,
    object_id text NOT NULL,
    id bigint NOT NULL,
    CONSTRAINT parse_object_ids_kind_check CHECK ((kind = ANY (ARRAY['user'::text, 'cafe'::text, 'comment'::text, 'file'::text]))),
    CONSTRAINT parse_object_ids_object_id_check CHECK (((char_length(object_id) >= 1) AND (char_length(object_id) <= 128)))
);

CREATE TABLE public.popularity_bitmaps (
    floor integer NOT NULL,
    chunk integer NOT NULL,
    bits bit(30720) NOT NULL
);
ALTER TABLE ONLY public.popularity_bitmaps ALTER COLUMN bits SET STORAGE PLAIN;

CREATE UNLOGGED TABLE public.rate_limit_counts (
    limit_name text NOT NULL,
    client text NOT NULL,
    minute bigint NOT NULL,
    count integer NOT NULL
);

CREATE TABLE public.rating_prior (
    one boolean DEFAULT true NOT NULL,
    generation bigint DEFAULT 0 NOT NULL,
    mean_0 numeric(7,6) NOT NULL,
    weight_0 integer NOT NULL,
    mean_1 numeric(7,6) NOT NULL,
    weight_1 integer NOT NULL,
    refreshed_through bigint,
    flipped_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT rating_prior_mean_0_check CHECK (((mean_0 >= (1)::numeric) AND (mean_0 <= (3)::numeric))),
    CONSTRAINT rating_prior_mean_1_check CHECK (((mean_1 >= (1)::numeric) AND (mean_1 <= (3)::numeric))),
    CONSTRAINT rating_prior_one_check CHECK (one),
    CONSTRAINT rating_prior_weight_0_check CHECK ((weight_0 >= 0)),
    CONSTRAINT rating_prior_weight_1_check CHECK ((weight_1 >= 0))
);

CREATE TABLE public.reconcile_requests (
    id bigint NOT NULL,
    requested_by bigint,
    requested_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE public.reconcile_requests ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.reconcile_requests_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.refused_uploads (
    id bigint NOT NULL,
    owner_id bigint,
    uploaded_from text,
    size integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT refused_uploads_size_check CHECK ((size >= 0)),
    CONSTRAINT refused_uploads_uploaded_from_check CHECK ((char_length(uploaded_from) <= 64))
);

ALTER TABLE public.refused_uploads ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.refused_uploads_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.search_bitmap_grams (
    gram text NOT NULL,
    ready boolean DEFAULT false NOT NULL,
    next_chunk integer DEFAULT 0 NOT NULL,
    added_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.search_gram_bitmaps (
    gram text NOT NULL,
    chunk integer NOT NULL,
    bits bit(30720) NOT NULL
);
ALTER TABLE ONLY public.search_gram_bitmaps ALTER COLUMN bits SET STORAGE PLAIN;

CREATE TABLE public.sessions (
    token_hash bytea NOT NULL,
    user_id bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    last_write_lsn pg_lsn
);

CREATE TABLE public.set_aside_indexes (
    name text NOT NULL,
    definition text NOT NULL,
    table_bytes bigint NOT NULL
);

CREATE TABLE public.users (
    id bigint NOT NULL,
    username text NOT NULL,
    password_hash text NOT NULL,
    email text,
    email_verified boolean DEFAULT false NOT NULL,
    age integer,
    is_admin boolean DEFAULT false NOT NULL,
    created_at timestamp(3) with time zone DEFAULT now() NOT NULL,
    updated_at timestamp(3) with time zone DEFAULT now() NOT NULL,
    blocked_at timestamp with time zone,
    username_skeleton text,
    language text,
    CONSTRAINT users_age_check CHECK (((age >= 0) AND (age <= 150))),
    CONSTRAINT users_created_at_in_range CHECK (((created_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (created_at < '10000-01-01 00:00:00+00'::timestamp with time zone))),
    CONSTRAINT users_language_check CHECK ((language = ANY (ARRAY['ja'::text, 'en'::text]))),
    CONSTRAINT users_updated_at_in_range CHECK (((updated_at >= '0001-01-01 00:00:00+00'::timestamp with time zone) AND (updated_at < '10000-01-01 00:00:00+00'::timestamp with time zone))),
    CONSTRAINT users_username_check CHECK (((char_length(username) >= 3) AND (char_length(username) <= 40)))
);

ALTER TABLE public.users ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.users_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY public.account_tokens
    ADD CONSTRAINT account_tokens_pkey PRIMARY KEY (token_hash);

ALTER TABLE ONLY public.aggregation_outbox
    ADD CONSTRAINT aggregation_outbox_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.app_secrets
    ADD CONSTRAINT app_secrets_pkey PRIMARY KEY (name);

ALTER TABLE ONLY public.audit_changes
    ADD CONSTRAINT audit_changes_pkey PRIMARY KEY (audit_id, field);

ALTER TABLE ONLY public.audit_log
    ADD CONSTRAINT audit_log_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.backup_runs
    ADD CONSTRAINT backup_runs_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.cafe_owners
    ADD CONSTRAINT cafe_owners_pkey PRIMARY KEY (cafe_id, user_id);

ALTER TABLE ONLY public.cafe_stats
    ADD CONSTRAINT cafe_stats_pkey PRIMARY KEY (cafe_id) INCLUDE (comment_sum, created_at, rating_score_0, rating_score_1);

ALTER TABLE ONLY public.cafes
    ADD CONSTRAINT cafes_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.comment_reports
    ADD CONSTRAINT comment_reports_comment_id_user_id_key UNIQUE (comment_id, user_id);

ALTER TABLE ONLY public.comments
    ADD CONSTRAINT comments_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.file_sizes
    ADD CONSTRAINT file_sizes_object_key_key UNIQUE (object_key);

ALTER TABLE ONLY public.file_sizes
    ADD CONSTRAINT file_sizes_pkey PRIMARY KEY (file_id, width, encoding);

ALTER TABLE ONLY public.files
    ADD CONSTRAINT files_object_key_key UNIQUE (object_key);

ALTER TABLE ONLY public.files
    ADD CONSTRAINT files_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.helpful_outbox
    ADD CONSTRAINT helpful_outbox_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.helpful_votes
    ADD CONSTRAINT helpful_votes_pkey PRIMARY KEY (comment_id, user_id);

ALTER TABLE ONLY public.hidden_comments
    ADD CONSTRAINT hidden_comments_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (user_id, key);

ALTER TABLE ONLY public.job_runs
    ADD CONSTRAINT job_runs_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.live_changes
    ADD CONSTRAINT live_changes_pkey PRIMARY KEY (seq);

ALTER TABLE ONLY public.live_feed_pruned
    ADD CONSTRAINT live_feed_pruned_pkey PRIMARY KEY (one);

ALTER TABLE ONLY public.mail_outbox
    ADD CONSTRAINT mail_outbox_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.object_deletions
    ADD CONSTRAINT object_deletions_pkey PRIMARY KEY (object_key);

ALTER TABLE ONLY public.parse_object_ids
    ADD CONSTRAINT parse_object_ids_kind_id_key UNIQUE (kind, id);

ALTER TABLE ONLY public.parse_object_ids
    ADD CONSTRAINT parse_object_ids_pkey PRIMARY KEY (kind, object_id);

ALTER TABLE ONLY public.popularity_bitmaps
    ADD CONSTRAINT popularity_bitmaps_pkey PRIMARY KEY (floor, chunk);

ALTER TABLE ONLY public.rate_limit_counts
    ADD CONSTRAINT rate_limit_counts_pkey PRIMARY KEY (limit_name, client, minute);

ALTER TABLE ONLY public.rating_prior
    ADD CONSTRAINT rating_prior_pkey PRIMARY KEY (one);

ALTER TABLE ONLY public.reconcile_requests
    ADD CONSTRAINT reconcile_requests_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.refused_uploads
    ADD CONSTRAINT refused_uploads_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

ALTER TABLE ONLY public.search_bitmap_grams
    ADD CONSTRAINT search_bitmap_grams_pkey PRIMARY KEY (gram);

ALTER TABLE ONLY public.search_gram_bitmaps
    ADD CONSTRAINT search_gram_bitmaps_pkey PRIMARY KEY (gram, chunk);

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (token_hash);

ALTER TABLE ONLY public.set_aside_indexes
    ADD CONSTRAINT set_aside_indexes_pkey PRIMARY KEY (name);

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

CREATE INDEX account_tokens_expiry_idx ON public.account_tokens USING btree (expires_at);

CREATE INDEX account_tokens_mail ON public.account_tokens USING btree (mail_id) WHERE (mail_id IS NOT NULL);

CREATE INDEX account_tokens_user_idx ON public.account_tokens USING btree (user_id, purpose);

CREATE UNIQUE INDEX backup_runs_period_idx ON public.backup_runs USING btree (period) WHERE (period IS NOT NULL);

CREATE INDEX backup_runs_started_idx ON public.backup_runs USING btree (started_at);

CREATE INDEX cafe_owners_user_idx ON public.cafe_owners USING btree (user_id);

CREATE INDEX cafe_stats_newest_idx ON public.cafe_stats USING btree (created_at, cafe_id);

CREATE INDEX cafe_stats_popular_idx ON public.cafe_stats USING btree (comment_sum, created_at, cafe_id);

CREATE INDEX cafe_stats_rating_0_idx ON public.cafe_stats USING btree (COALESCE(rating_score_0, ('-1'::integer)::numeric), comment_sum, created_at, cafe_id) INCLUDE (rating_score_0);

CREATE INDEX cafe_stats_rating_1_idx ON public.cafe_stats USING btree (COALESCE(rating_score_1, ('-1'::integer)::numeric), comment_sum, created_at, cafe_id) INCLUDE (rating_score_1);

CREATE INDEX cafes_created_at_id_idx ON public.cafes USING btree (created_at DESC, id DESC);

CREATE INDEX cafes_image_id_idx ON public.cafes USING btree (image_id) WHERE (image_id IS NOT NULL);

CREATE INDEX cafes_location_idx ON public.cafes USING gist (location);

CREATE INDEX cafes_search_grams_idx ON public.cafes USING gin (search_grams);

CREATE INDEX comment_reports_open_idx ON public.comment_reports USING btree (comment_id, created_at) WHERE (resolved_at IS NULL);

CREATE INDEX comments_cafe_created_idx ON public.comments USING btree (cafe_id, created_at DESC, id DESC) INCLUDE (star);

CREATE INDEX comments_cafe_helpful_idx ON public.comments USING btree (cafe_id, helpful_count DESC, created_at DESC, id DESC);

CREATE INDEX comments_cafe_stars_idx ON public.comments USING btree (cafe_id, star DESC, created_at DESC, id DESC);

CREATE INDEX comments_created_idx ON public.comments USING btree (created_at DESC, id DESC);

CREATE INDEX comments_image_id_idx ON public.comments USING btree (image_id) WHERE (image_id IS NOT NULL);

CREATE INDEX comments_user_id_idx ON public.comments USING btree (user_id);

CREATE INDEX comments_with_image_created_idx ON public.comments USING btree (created_at DESC, id DESC) WHERE (image_id IS NOT NULL);

CREATE INDEX files_in_object_store_idx ON public.files USING btree (id) WHERE (object_key IS NOT NULL);

CREATE INDEX files_owner_created_idx ON public.files USING btree (owner_id, created_at);

CREATE INDEX files_uncleaned_idx ON public.files USING btree (id) WHERE (cleaned_at IS NULL);

CREATE INDEX files_uploaded_from_created_idx ON public.files USING btree (uploaded_from, created_at) WHERE (uploaded_from IS NOT NULL);

CREATE INDEX helpful_votes_user_idx ON public.helpful_votes USING btree (user_id);

CREATE INDEX hidden_comments_cafe_idx ON public.hidden_comments USING btree (cafe_id);

CREATE INDEX hidden_comments_image_idx ON public.hidden_comments USING btree (image_id) WHERE (image_id IS NOT NULL);

CREATE INDEX hidden_comments_user_idx ON public.hidden_comments USING btree (user_id, created_at DESC, id DESC);

CREATE INDEX idempotency_keys_created_at_idx ON public.idempotency_keys USING btree (created_at);

CREATE UNIQUE INDEX job_runs_kind_period_key ON public.job_runs USING btree (kind, period) WHERE (period IS NOT NULL);

CREATE INDEX job_runs_started_at_idx ON public.job_runs USING btree (started_at DESC);

CREATE INDEX live_changes_cafe_idx ON public.live_changes USING btree (cafe_id, seq);

CREATE INDEX live_changes_recorded_idx ON public.live_changes USING btree (recorded_at);

CREATE INDEX login_failures_key_address_idx ON public.login_failures USING btree (username_key, address, failed_at DESC);

CREATE INDEX mail_outbox_due_idx ON public.mail_outbox USING btree (next_attempt_at) WHERE (state = 'pending'::text);

CREATE INDEX mail_outbox_finished_idx ON public.mail_outbox USING btree (finished_at) WHERE (finished_at IS NOT NULL);

CREATE UNIQUE INDEX mail_outbox_owner_reply_idx ON public.mail_outbox USING btree (comment_id) WHERE (kind = 'owner_reply'::text);

CREATE INDEX mail_outbox_recipient ON public.mail_outbox USING btree (lower(recipient), created_at);

CREATE INDEX mail_outbox_user_idx ON public.mail_outbox USING btree (user_id, created_at) WHERE (user_id IS NOT NULL);

CREATE INDEX refused_uploads_from_created_idx ON public.refused_uploads USING btree (uploaded_from, created_at) WHERE (uploaded_from IS NOT NULL);

CREATE INDEX refused_uploads_owner_created_idx ON public.refused_uploads USING btree (owner_id, created_at);

CREATE INDEX sessions_expires_at_idx ON public.sessions USING btree (expires_at);

CREATE INDEX sessions_user_id_idx ON public.sessions USING btree (user_id);

CREATE INDEX users_email_lower_idx ON public.users USING btree (lower(email)) WHERE (email IS NOT NULL);

CREATE UNIQUE INDEX users_username_lower_key ON public.users USING btree (lower(username));

CREATE INDEX users_username_skeleton_idx ON public.users USING btree (username_skeleton);

CREATE TRIGGER audit_changes_no_change BEFORE DELETE OR UPDATE ON public.audit_changes FOR EACH ROW EXECUTE FUNCTION public.audit_is_append_only();

CREATE TRIGGER audit_changes_no_truncate BEFORE TRUNCATE ON public.audit_changes FOR EACH STATEMENT EXECUTE FUNCTION public.audit_is_append_only();

CREATE TRIGGER audit_log_no_change BEFORE DELETE OR UPDATE ON public.audit_log FOR EACH ROW EXECUTE FUNCTION public.audit_is_append_only();

CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON public.audit_log FOR EACH STATEMENT EXECUTE FUNCTION public.audit_is_append_only();

CREATE TRIGGER cafe_owners_notify_pages AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.cafe_owners FOR EACH STATEMENT EXECUTE FUNCTION public.notify_page_change('cafes');

CREATE CONSTRAINT TRIGGER cafe_stats_live_deleted AFTER DELETE ON public.cafe_stats DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (public.live_feed_enabled()) EXECUTE FUNCTION public.live_cafe_changed();

CREATE CONSTRAINT TRIGGER cafe_stats_live_updated AFTER UPDATE ON public.cafe_stats DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((public.live_feed_enabled() AND ((old.comment_sum IS DISTINCT FROM new.comment_sum) OR (old.comment_amount IS DISTINCT FROM new.comment_amount)))) EXECUTE FUNCTION public.live_cafe_changed();

CREATE TRIGGER cafe_stats_notify_pages AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.cafe_stats FOR EACH STATEMENT EXECUTE FUNCTION public.notify_page_change('cafes');

CREATE TRIGGER cafe_stats_notify_photos AFTER DELETE OR TRUNCATE ON public.cafe_stats FOR EACH STATEMENT EXECUTE FUNCTION public.notify_page_change('photos');

CREATE TRIGGER cafe_stats_popularity_inserted AFTER INSERT ON public.cafe_stats REFERENCING NEW TABLE AS new_stats FOR EACH STATEMENT EXECUTE FUNCTION public.cafe_stats_popularity_moved();

CREATE TRIGGER cafe_stats_popularity_updated AFTER UPDATE ON public.cafe_stats REFERENCING OLD TABLE AS old_stats NEW TABLE AS new_stats FOR EACH STATEMENT EXECUTE FUNCTION public.cafe_stats_popularity_moved();

CREATE TRIGGER cafes_bitmaps_deleted AFTER DELETE ON public.cafes REFERENCING OLD TABLE AS old_cafes FOR EACH STATEMENT EXECUTE FUNCTION public.cafes_bitmaps_deleted();

CREATE TRIGGER cafes_bitmaps_inserted AFTER INSERT ON public.cafes REFERENCING NEW TABLE AS new_cafes FOR EACH STATEMENT EXECUTE FUNCTION public.cafes_bitmaps_inserted();

CREATE TRIGGER cafes_bitmaps_updated AFTER UPDATE ON public.cafes REFERENCING OLD TABLE AS old_cafes NEW TABLE AS new_cafes FOR EACH STATEMENT EXECUTE FUNCTION public.cafes_bitmaps_updated();

CREATE TRIGGER cafes_copy_search_text AFTER UPDATE ON public.cafes REFERENCING NEW TABLE AS new_cafes FOR EACH STATEMENT EXECUTE FUNCTION public.cafes_copy_search_text();

CREATE TRIGGER cafes_create_stats AFTER INSERT ON public.cafes REFERENCING NEW TABLE AS new_cafes FOR EACH STATEMENT EXECUTE FUNCTION public.cafes_create_stats();

CREATE TRIGGER cafes_keep_opening_week BEFORE INSERT OR UPDATE OF opening_hours ON public.cafes FOR EACH ROW EXECUTE FUNCTION public.cafes_keep_opening_week();

CREATE CONSTRAINT TRIGGER cafes_live_updated AFTER UPDATE ON public.cafes DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((public.live_feed_enabled() AND (old.archived_at IS NULL) AND (new.archived_at IS NULL) AND ((((((((((old.name IS DISTINCT FROM new.name) OR (old.catch_copy IS DISTINCT FROM new.catch_copy)) OR (old.introduction IS DISTINCT FROM new.introduction)) OR (old.image_id IS DISTINCT FROM new.image_id)) OR (old.publish_date IS DISTINCT FROM new.publish_date)) OR (old.updated_at IS DISTINCT FROM new.updated_at)) OR (old.location IS DISTINCT FROM new.location)) OR (old.address IS DISTINCT FROM new.address)) OR (old.time_zone IS DISTINCT FROM new.time_zone)) OR (old.opening_hours IS DISTINCT FROM new.opening_hours)))) EXECUTE FUNCTION public.live_cafe_changed();

CREATE TRIGGER cafes_notify_pages AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.cafes FOR EACH STATEMENT EXECUTE FUNCTION public.notify_page_change('cafes');

CREATE TRIGGER cafes_notify_photos AFTER DELETE OR UPDATE OF image_id OR TRUNCATE ON public.cafes FOR EACH STATEMENT EXECUTE FUNCTION public.notify_page_change('photos');

CREATE TRIGGER comments_enqueue_deleted AFTER DELETE ON public.comments REFERENCING OLD TABLE AS old_comments FOR EACH STATEMENT EXECUTE FUNCTION public.comments_enqueue_deleted();

CREATE TRIGGER comments_enqueue_inserted AFTER INSERT ON public.comments REFERENCING NEW TABLE AS new_comments FOR EACH STATEMENT EXECUTE FUNCTION public.comments_enqueue_inserted();

CREATE TRIGGER comments_enqueue_updated AFTER UPDATE ON public.comments REFERENCING OLD TABLE AS old_comments NEW TABLE AS new_comments FOR EACH STATEMENT EXECUTE FUNCTION public.comments_enqueue_updated();

CREATE CONSTRAINT TRIGGER comments_live_deleted AFTER DELETE ON public.comments DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (public.live_feed_enabled()) EXECUTE FUNCTION public.live_comment_changed();

CREATE CONSTRAINT TRIGGER comments_live_inserted AFTER INSERT ON public.comments DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (public.live_feed_enabled()) EXECUTE FUNCTION public.live_comment_changed();

CREATE CONSTRAINT TRIGGER comments_live_updated AFTER UPDATE ON public.comments DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((public.live_feed_enabled() AND (old.* IS DISTINCT FROM new.*))) EXECUTE FUNCTION public.live_comment_changed();

CREATE TRIGGER comments_notify_pages AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.comments FOR EACH STATEMENT EXECUTE FUNCTION public.notify_page_change('comments');

CREATE TRIGGER comments_notify_photos AFTER DELETE OR UPDATE OF image_id OR TRUNCATE ON public.comments FOR EACH STATEMENT EXECUTE FUNCTION public.notify_page_change('photos');

CREATE CONSTRAINT TRIGGER comments_votes_gone AFTER DELETE ON public.comments DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.comment_votes_gone();

CREATE TRIGGER file_sizes_note_object_deletion AFTER DELETE ON public.file_sizes REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION public.note_object_deletion();

CREATE TRIGGER files_note_object_deletion AFTER DELETE ON public.files REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION public.note_object_deletion();

CREATE TRIGGER files_notify_photos AFTER DELETE OR UPDATE OR TRUNCATE ON public.files FOR EACH STATEMENT EXECUTE FUNCTION public.notify_page_change('photos');

CREATE TRIGGER helpful_votes_deleted AFTER DELETE ON public.helpful_votes REFERENCING OLD TABLE AS changed_votes FOR EACH STATEMENT EXECUTE FUNCTION public.helpful_votes_enqueue();

CREATE TRIGGER helpful_votes_inserted AFTER INSERT ON public.helpful_votes REFERENCING NEW TABLE AS changed_votes FOR EACH STATEMENT EXECUTE FUNCTION public.helpful_votes_enqueue();

CREATE CONSTRAINT TRIGGER hidden_comments_votes_gone AFTER DELETE ON public.hidden_comments DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.comment_votes_gone();

CREATE TRIGGER rating_prior_notify_pages AFTER UPDATE OF generation ON public.rating_prior FOR EACH STATEMENT EXECUTE FUNCTION public.notify_page_change('cafes');

CREATE TRIGGER sessions_notify_deleted AFTER DELETE ON public.sessions REFERENCING OLD TABLE AS ended FOR EACH STATEMENT EXECUTE FUNCTION public.notify_ended_sessions();

CREATE TRIGGER sessions_notify_moved AFTER UPDATE OF user_id, expires_at, token_hash ON public.sessions FOR EACH ROW EXECUTE FUNCTION public.notify_moved_session();

CREATE TRIGGER sessions_notify_truncated AFTER TRUNCATE ON public.sessions FOR EACH STATEMENT EXECUTE FUNCTION public.notify_all_sessions();

CREATE TRIGGER users_block_recounts_votes AFTER UPDATE OF blocked_at ON public.users FOR EACH ROW WHEN ((old.blocked_at IS DISTINCT FROM new.blocked_at)) EXECUTE FUNCTION public.users_block_recounts_votes();

CREATE TRIGGER users_notify_sessions_deleted AFTER DELETE ON public.users REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.notify_changed_users();

CREATE TRIGGER users_notify_sessions_truncated AFTER TRUNCATE ON public.users FOR EACH STATEMENT EXECUTE FUNCTION public.notify_all_sessions();

CREATE TRIGGER users_notify_sessions_updated AFTER UPDATE ON public.users REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION public.notify_changed_users();

ALTER TABLE ONLY public.account_tokens
    ADD CONSTRAINT account_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.audit_changes
    ADD CONSTRAINT audit_changes_audit_id_fkey FOREIGN KEY (audit_id) REFERENCES public.audit_log(id);

ALTER TABLE ONLY public.cafe_owners
    ADD CONSTRAINT cafe_owners_cafe_id_fkey FOREIGN KEY (cafe_id) REFERENCES public.cafes(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.cafe_owners
    ADD CONSTRAINT cafe_owners_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.cafe_stats
    ADD CONSTRAINT cafe_stats_cafe_id_fkey FOREIGN KEY (cafe_id) REFERENCES public.cafes(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.cafes
    ADD CONSTRAINT cafes_image_id_fkey FOREIGN KEY (image_id) REFERENCES public.files(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.comment_reports
    ADD CONSTRAINT comment_reports_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.comments
    ADD CONSTRAINT comments_cafe_id_fkey FOREIGN KEY (cafe_id) REFERENCES public.cafes(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.comments
    ADD CONSTRAINT comments_image_id_fkey FOREIGN KEY (image_id) REFERENCES public.files(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.comments
    ADD CONSTRAINT comments_reply_by_fkey FOREIGN KEY (reply_by) REFERENCES public.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.comments
    ADD CONSTRAINT comments_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.file_sizes
    ADD CONSTRAINT file_sizes_file_id_fkey FOREIGN KEY (file_id) REFERENCES public.files(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.files
    ADD CONSTRAINT files_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.helpful_votes
    ADD CONSTRAINT helpful_votes_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.hidden_comments
    ADD CONSTRAINT hidden_comments_cafe_id_fkey FOREIGN KEY (cafe_id) REFERENCES public.cafes(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.hidden_comments
    ADD CONSTRAINT hidden_comments_image_id_fkey FOREIGN KEY (image_id) REFERENCES public.files(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.hidden_comments
    ADD CONSTRAINT hidden_comments_reply_by_fkey FOREIGN KEY (reply_by) REFERENCES public.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.hidden_comments
    ADD CONSTRAINT hidden_comments_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.mail_outbox
    ADD CONSTRAINT mail_outbox_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.reconcile_requests
    ADD CONSTRAINT reconcile_requests_requested_by_fkey FOREIGN KEY (requested_by) REFERENCES public.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY public.refused_uploads
    ADD CONSTRAINT refused_uploads_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.search_gram_bitmaps
    ADD CONSTRAINT search_gram_bitmaps_gram_fkey FOREIGN KEY (gram) REFERENCES public.search_bitmap_grams(gram) ON DELETE CASCADE;

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;
