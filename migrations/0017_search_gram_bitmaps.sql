-- 0017: bitmaps of the cafes that contain each common gram, for keywords that are common alone but
-- rare together (two cities, three phrases that seldom meet, the digit pairs of a number).
--
-- The gram index answers those by intersecting posting lists of 100,000+ entries: 8–10 ms at 1M
-- cafes just to prove that no cafe has both of two cities, after a walk of the order that found
-- none. A bitmap per gram, 30,720 cafes a row (33 rows per gram at 1M cafes), turns that into
-- ANDing rows of 3,840 bytes and counting bits: about a millisecond, an exact upper bound on the
-- matches, and the candidates themselves when there are few (docs/performance.md).
--
-- Only common grams have bitmaps (the worker keeps `search_bitmap_grams` to what pg_stats says is
-- common, see `GramBitmaps`); a rare gram's posting list is short, and the gram index stays the
-- better way to it. A bit is never missing: the cafes' own statements write the bitmaps of the
-- grams in the table, in their transactions, and a gram is used only once it is `ready`. A bit may
-- be set for a cafe that no longer has the gram only if it changed while its gram was being built
-- (the search checks every candidate's text, so that costs a lookup, never a wrong answer).

-- `next_chunk`: how far the worker has built a new gram's bitmaps from the stored texts; from the
-- moment the row exists, every cafe written keeps its bit, so the build can take its time.
CREATE TABLE search_bitmap_grams (
    gram       text        PRIMARY KEY,
    ready      boolean     NOT NULL DEFAULT false,
    next_chunk integer     NOT NULL DEFAULT 0,
    added_at   timestamptz NOT NULL DEFAULT now()
);

-- Bit (id % 30720) of row (gram, id / 30720) is set when cafe `id`'s search_grams holds `gram`. A
-- missing row means every bit clear. 3,840 bytes of bits: two rows fill a page, stored as they are
-- (PLAIN: never compressed or moved out of line, which would cost every AND a decompression).
CREATE TABLE search_gram_bitmaps (
    gram  text      NOT NULL REFERENCES search_bitmap_grams ON DELETE CASCADE,
    chunk integer   NOT NULL,
    bits  bit(30720) NOT NULL,
    PRIMARY KEY (gram, chunk)
);
ALTER TABLE search_gram_bitmaps ALTER COLUMN bits SET STORAGE PLAIN;

-- Applies one statement's changes: (id, gram) pairs whose bit to set and pairs whose bit to clear,
-- for grams that have bitmaps, as one upsert in (gram, chunk) order. One statement, because it must
-- be atomic against a row another writer (or the builder) is creating: an UPDATE of the rows that
-- exist followed by an INSERT of those that do not lost the bits of a row committed in between (the
-- four-writer test caught it), and locking in two passes let two writers wait on each other in a
-- circle. A clear for a row that does not exist inserts an all-clear row, which changes nothing.
CREATE FUNCTION search_bitmaps_apply(set_ids bigint[], set_grams text[], clear_ids bigint[], clear_grams text[])
RETURNS void LANGUAGE sql AS $$
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

CREATE FUNCTION cafes_bitmaps_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; grams text[];
BEGIN
    SELECT array_agg(n.id), array_agg(g.gram) INTO ids, grams
    FROM new_cafes n, unnest(n.search_grams) AS u(gram) JOIN search_bitmap_grams g USING (gram);
    IF ids IS NOT NULL THEN
        PERFORM search_bitmaps_apply(ids, grams, '{}', '{}');
    END IF;
    RETURN NULL;
END $$;

-- An edit that leaves the searchable text as it was (a photo, the publish date) changes nothing here.
CREATE FUNCTION cafes_bitmaps_updated() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE FUNCTION cafes_bitmaps_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; grams text[];
BEGIN
    SELECT array_agg(o.id), array_agg(g.gram) INTO ids, grams
    FROM old_cafes o, unnest(o.search_grams) AS u(gram) JOIN search_bitmap_grams g USING (gram);
    IF ids IS NOT NULL THEN
        PERFORM search_bitmaps_apply('{}', '{}', ids, grams);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER cafes_bitmaps_inserted AFTER INSERT ON cafes
    REFERENCING NEW TABLE AS new_cafes FOR EACH STATEMENT EXECUTE FUNCTION cafes_bitmaps_inserted();
CREATE TRIGGER cafes_bitmaps_updated AFTER UPDATE ON cafes
    REFERENCING OLD TABLE AS old_cafes NEW TABLE AS new_cafes FOR EACH STATEMENT EXECUTE FUNCTION cafes_bitmaps_updated();
CREATE TRIGGER cafes_bitmaps_deleted AFTER DELETE ON cafes
    REFERENCING OLD TABLE AS old_cafes FOR EACH STATEMENT EXECUTE FUNCTION cafes_bitmaps_deleted();
