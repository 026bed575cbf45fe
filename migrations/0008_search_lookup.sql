-- 0008: the ids of the cafes whose search text holds every keyword, found through the gram index
-- in one call (at most `cap` ids). Before this the lookup was four round trips: BEGIN, SET LOCAL,
-- the query, COMMIT, and a fresh plan every time. The settings below hold only while the function
-- runs: assuming keywords independent, the planner would scan the table for two common keywords
-- whose combination is rare. PL/pgSQL keeps the plan between calls, and it is the same for
-- every keyword: one GIN scan over the grams, then LIKE confirms.
CREATE FUNCTION cafe_matching_ids(keywords text[], cap int) RETURNS SETOF bigint
LANGUAGE plpgsql STABLE STRICT
SET enable_seqscan = off SET work_mem = '32MB' AS $$
DECLARE
    normalized text[] := array(SELECT lower(normalize(k, NFKC)) FROM unnest(keywords) AS k);
BEGIN
    IF cardinality(normalized) = 0 THEN
        RETURN;
    END IF;
    -- A keyword of one or two characters is a gram itself (exact); a longer one needs all its
    -- 2-character substrings (necessary, not sufficient).
    RETURN QUERY
        SELECT c.id FROM cafes c
        WHERE c.search_grams @> array(SELECT g FROM unnest(normalized) AS k,
                                      unnest(CASE WHEN char_length(k) <= 2 THEN ARRAY[k] ELSE cafe_bigrams(k) END) AS g)
          AND c.search_text LIKE ALL (array(SELECT cafe_like_pattern(k) FROM unnest(normalized) AS k))
        LIMIT cap;
END $$;
