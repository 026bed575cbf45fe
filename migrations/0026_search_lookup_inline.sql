-- 0026: the keyword lookup as part of the listing's own statement instead of a PL/pgSQL function
-- that ran it. Measured with pgbench (64 clients, the rare-keyword page of `make bench`): the page
-- through `cafe_matching_ids` ran at about half the rate of the same page written as one plain
-- statement. Each call paid for a PL/pgSQL frame, restoring its SET clauses, revalidating the plan
-- of its inner query and returning its ids through a tuplestore. What the function did is now two
-- small helpers, each evaluated once per statement as an init plan:
--
-- `cafe_lookup_grams(keywords, hints)`: the grams to look up, as `cafe_matching_ids` chose them
-- (a keyword of one or two characters is a gram itself; a longer one its 2-character substrings; a
-- hint that is one of the keyword's own grams replaces them; keywords that normalise to nothing are
-- skipped), or NULL when every keyword normalises to nothing (then nothing matches).
--
-- `cafe_capped(ids, cap)`: the ids, or 54000 (program_limit_exceeded) when there are more than
-- `cap`: the caller then walks its order instead of sorting them all.
--
-- The index choice no longer needs `enable_seqscan = off`: the grams are an init plan's value, which
-- the planner cannot see, so it estimates the containment at its default selectivity (0.5%) and
-- takes the GIN index for every keyword (EXPLAIN at 20,000 and 1,000,000 cafes).
CREATE FUNCTION cafe_lookup_grams(keywords text[], hints text[]) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    keyword text;
    own text[];
    grams text[] := '{}';
    looked int := 0;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(keywords), 0) LOOP
        keyword := lower(normalize(keywords[i], NFKC));
        CONTINUE WHEN keyword IS NULL OR char_length(keyword) = 0;
        looked := looked + 1;
        own := CASE WHEN char_length(keyword) <= 2 THEN ARRAY[keyword] ELSE cafe_bigrams(keyword) END;
        grams := grams || CASE WHEN hints[i] = ANY(own) THEN ARRAY[hints[i]] ELSE own END;
    END LOOP;
    RETURN CASE WHEN looked = 0 THEN NULL ELSE grams END;
END $$;

CREATE FUNCTION cafe_capped(ids bigint[], cap int) RETURNS bigint[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    IF cardinality(ids) > cap THEN
        RAISE EXCEPTION 'more than % cafes match', cap USING ERRCODE = 'program_limit_exceeded';
    END IF;
    RETURN ids;
END $$;

DROP FUNCTION cafe_matching_ids(text[], text[], int);
