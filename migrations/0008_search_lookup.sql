-- 0008: the ids of the cafes whose search text holds every keyword, found through the gram index
-- in one call; more than `cap` of them is an error (54000, program_limit_exceeded: the caller then
-- walks its listing order instead of sorting them all). The page among the ids is taken in the same
-- statement. Before this the lookup was five round trips: BEGIN, SET LOCAL, the query, COMMIT, the
-- page, and a fresh plan every time. The settings below hold only while the function
-- runs: assuming keywords independent, the planner would scan the table for two common keywords
-- whose combination is rare; and one plan fits every keyword (a GIN scan over the grams, then LIKE
-- confirms), so PL/pgSQL keeps it between calls instead of planning again each time a rare keyword
-- makes the generic plan look costlier than a custom one.
--
-- `hints[i]` may name one gram of `keywords[i]` to look up instead of all of them (the caller knows
-- which is rarest). Any subset of a keyword's grams is a necessary condition, so the answer is the
-- same; a hint that is not one of the keyword's grams, as PostgreSQL computes them, is ignored.
CREATE FUNCTION cafe_matching_ids(keywords text[], hints text[], cap int) RETURNS SETOF bigint
LANGUAGE plpgsql STABLE STRICT
SET enable_seqscan = off SET work_mem = '32MB' SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    keyword text;
    own text[];
    grams text[] := '{}';
    patterns text[] := '{}';
    found bigint;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(keywords), 0) LOOP
        keyword := lower(normalize(keywords[i], NFKC));
        -- A keyword of one or two characters is a gram itself (exact); a longer one has its
        -- 2-character substrings (necessary, not sufficient); one that normalises to nothing, none.
        own := CASE WHEN char_length(keyword) = 0 THEN '{}'
                    WHEN char_length(keyword) <= 2 THEN ARRAY[keyword]
                    ELSE cafe_bigrams(keyword) END;
        grams := grams || CASE WHEN hints[i] = ANY(own) THEN ARRAY[hints[i]] ELSE own END;
        patterns := patterns || cafe_like_pattern(keyword);
    END LOOP;
    IF cardinality(patterns) = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT c.id FROM cafes c WHERE c.search_grams @> grams AND c.search_text LIKE ALL (patterns) LIMIT cap + 1;
    GET DIAGNOSTICS found = ROW_COUNT;
    IF found > cap THEN
        RAISE EXCEPTION 'more than % cafes match', cap USING ERRCODE = 'program_limit_exceeded';
    END IF;
END $$;
