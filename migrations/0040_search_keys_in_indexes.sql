-- A search whose matches the gram bitmaps list (`GramBitmaps`: at most 10,000 candidates) finds its page
-- from the sort keys alone, then checks the texts of the candidates in order until the page is full. The
-- keys come from indexes only, never from the table's rows:
--
-- * the primary key carries every sort key, so that the candidates' keys are one index-only lookup each
--   (5,075 candidates of a 3-digit number at 1M cafes: 14 -> 9 ms with the plan cache, their texts then
--   checked for the first ~30 of them instead of all);
-- * each rating index carries its slot's score as a column, the only way PostgreSQL 15 reads an
--   expression index's order without the table's rows, so that every order can be walked from its index
--   alone among the candidates (the newest and popular indexes already hold every key).
--
-- docs/performance.md, "Keyword search", has the measurements.
ALTER TABLE cafe_stats DROP CONSTRAINT cafe_stats_pkey,
    ADD CONSTRAINT cafe_stats_pkey PRIMARY KEY (cafe_id) INCLUDE (comment_sum, created_at, rating_score_0, rating_score_1);

DROP INDEX cafe_stats_rating_0_idx, cafe_stats_rating_1_idx;
CREATE INDEX cafe_stats_rating_0_idx ON cafe_stats ((coalesce(rating_score_0, -1)), comment_sum, created_at, cafe_id) INCLUDE (rating_score_0);
CREATE INDEX cafe_stats_rating_1_idx ON cafe_stats ((coalesce(rating_score_1, -1)), comment_sum, created_at, cafe_id) INCLUDE (rating_score_1);

-- An index-only read skips the table only for pages the visibility map calls all-visible; every comment
-- updates its cafe's row and clears its page's bit until a vacuum sets it again. The default (a vacuum
-- after a fifth of the table changed) would leave most pages of a busy million-cafe table unmarked.
ALTER TABLE cafe_stats SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000,
                            autovacuum_vacuum_insert_scale_factor = 0.01);
