-- 0028: which grams a search keyword is looked up by, written once. A keyword of one or two
-- characters is a gram itself, a longer one its 2-character substrings (`cafe_bigrams`), and one
-- that normalises to nothing has none. The rule was spelled out in two statements — the keyword
-- forms (`KeywordFormCache`) and `/parse`'s narrowing through the gram index (`RecordQuerySQL`) — and
-- they differed for an empty keyword. `normalized` is the keyword as the search text keeps it,
-- lower(normalize(keyword, NFKC)). Not STRICT, so that the planner inlines it (a NULL gives NULL).
CREATE FUNCTION cafe_keyword_grams(normalized text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN char_length(normalized) = 0 THEN '{}'::text[]
                WHEN char_length(normalized) <= 2 THEN ARRAY[normalized]
                ELSE cafe_bigrams(normalized) END
$$;
