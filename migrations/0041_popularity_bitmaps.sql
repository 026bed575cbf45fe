-- Bitmaps of the cafes that reach each popularity floor (16, 64, 256, … comments: powers of four), laid
-- out as the gram bitmaps are (30,720 cafes a row), so that a search in popularity order can AND them with
-- its candidates' bits and take its page among the few candidates that reach the highest floor a page of
-- them reaches, instead of walking the popularity index until enough candidates turn up.
--
-- Why: a keyword whose matches the popular cafes seldom hold (the 5,075 candidates of a 3-digit number at
-- 1M cafes) has its first page 36,335 entries deep in the popularity index, and each of the other two ways
-- costs about 4 ms (the walk, ~0.1 µs an entry; the candidates' keys, ~1 µs each). Thirty-six of those
-- candidates reach 16 comments: their keys are the page. docs/performance.md, "Keyword search".
--
-- A bit is never missing: the triggers below set a cafe's bits in the transaction that brings it
-- to a floor, whoever writes `comment_sum` (the aggregation worker, the seed, the demo). A bit may be set
-- for a cafe below its floor (one deleted or archived keeps its bits), which only widens the candidates:
-- a page taken from them is kept only if its last row reaches the floor (`SearchPlan.Step.candidatesReaching`).
CREATE TABLE popularity_bitmaps (
    floor integer    NOT NULL,
    chunk integer    NOT NULL,
    bits  bit(30720) NOT NULL,
    PRIMARY KEY (floor, chunk)
);
ALTER TABLE popularity_bitmaps ALTER COLUMN bits SET STORAGE PLAIN;

-- The floors a cafe with `comments` comments reaches, lowest first. Under 16 comments a third of the
-- cafes or more share a floor at 1M cafes, which no longer narrows the candidates.
CREATE FUNCTION cafe_popularity_floors(comments integer) RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY(SELECT 1 << (2 * k) FROM generate_series(2, 15) AS k WHERE 1 << (2 * k) <= comments ORDER BY k);

-- Applies one statement's moves: (cafe, floor) pairs whose bit to set (`reached`) or clear, as one upsert
-- in (floor, chunk) order, as `search_bitmaps_apply` does for the grams.
CREATE FUNCTION popularity_bitmaps_apply(ids bigint[], floors integer[], reached boolean[])
RETURNS void LANGUAGE sql AS $$
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

-- Statement-level: a batch of the worker or the seed moves its cafes in one upsert (row by row, the
-- seed of 1M cafes took 301 s instead of 229). One transaction-level lock for every writer that moves a
-- cafe across a floor, held to its commit: a transaction's statements upsert bitmap rows in their own
-- order, and two transactions that each held a row the other wanted would deadlock. Crossings are rare
-- (a cafe crosses one at 16, 64, 256, … comments). A writer that moves cafes in several statements
-- locks their rows first (the worker moves a batch in one, its rows locked in id order), so that none
-- waits for a row while it holds this lock.
CREATE FUNCTION cafe_stats_popularity_moved() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER cafe_stats_popularity_inserted AFTER INSERT ON cafe_stats
    REFERENCING NEW TABLE AS new_stats FOR EACH STATEMENT EXECUTE FUNCTION cafe_stats_popularity_moved();
CREATE TRIGGER cafe_stats_popularity_updated AFTER UPDATE ON cafe_stats
    REFERENCING OLD TABLE AS old_stats NEW TABLE AS new_stats FOR EACH STATEMENT EXECUTE FUNCTION cafe_stats_popularity_moved();

-- Every bitmap from the stored counts (~1 s at 1M cafes), with the writers of the counts held off.
CREATE FUNCTION popularity_bitmaps_rebuild() RETURNS void LANGUAGE sql AS $$
    LOCK TABLE cafe_stats IN SHARE MODE;
    DELETE FROM popularity_bitmaps;
    INSERT INTO popularity_bitmaps (floor, chunk, bits)
    SELECT f, (s.cafe_id / 30720)::integer, bit_or(set_bit(B'0'::bit(30720), (s.cafe_id % 30720)::integer, 1))
    FROM cafe_stats s, unnest(cafe_popularity_floors(s.comment_sum)) AS f
    WHERE s.comment_sum >= 16
    GROUP BY 1, 2;
$$;
SELECT popularity_bitmaps_rebuild();
