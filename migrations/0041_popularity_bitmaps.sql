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
-- A bit is never missing: the row-level triggers below set a cafe's bits in the transaction that brings it
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

-- Sets the bits of the floors a cafe reached and clears those it left. One transaction-level lock for
-- every writer that moves a cafe across a floor, held to its commit: the rows of one statement upsert
-- bitmap rows in their own order, and two statements that each held a row the other wanted would
-- deadlock. Crossings are rare (a cafe crosses one at 16, 64, 256, … comments). A writer that moves
-- several cafes locks their rows first (the worker does, in id order), so that none waits for a row
-- while it holds this lock.
CREATE FUNCTION cafe_stats_popularity_moved() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    reached integer[] := cafe_popularity_floors(NEW.comment_sum);
    left_behind integer[] := '{}';
BEGIN
    IF TG_OP = 'UPDATE' THEN
        left_behind := cafe_popularity_floors(OLD.comment_sum);
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('popularity_bitmaps'));
    INSERT INTO popularity_bitmaps AS p (floor, chunk, bits)
    SELECT f, (NEW.cafe_id / 30720)::integer, set_bit(B'0'::bit(30720), (NEW.cafe_id % 30720)::integer, 1)
    FROM unnest(reached) AS f
    WHERE NOT f = ANY(left_behind)
    ORDER BY f
    ON CONFLICT (floor, chunk) DO UPDATE SET bits = set_bit(p.bits, (NEW.cafe_id % 30720)::integer, 1);
    UPDATE popularity_bitmaps SET bits = set_bit(bits, (NEW.cafe_id % 30720)::integer, 0)
    WHERE chunk = (NEW.cafe_id / 30720)::integer AND floor = ANY(left_behind) AND NOT floor = ANY(reached);
    RETURN NULL;
END $$;

-- The cheap tests first: most rows of an aggregation pass stay under the lowest floor.
CREATE TRIGGER cafe_stats_popularity_inserted AFTER INSERT ON cafe_stats
    FOR EACH ROW WHEN (NEW.comment_sum >= 16) EXECUTE FUNCTION cafe_stats_popularity_moved();
CREATE TRIGGER cafe_stats_popularity_updated AFTER UPDATE OF comment_sum ON cafe_stats
    FOR EACH ROW WHEN (OLD.comment_sum IS DISTINCT FROM NEW.comment_sum AND (OLD.comment_sum >= 16 OR NEW.comment_sum >= 16)
                       AND cafe_popularity_floors(OLD.comment_sum) IS DISTINCT FROM cafe_popularity_floors(NEW.comment_sum))
    EXECUTE FUNCTION cafe_stats_popularity_moved();

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
