-- 0027: a search's keywords are normalised by PostgreSQL once per keyword and process
-- (`KeywordFormCache`), and their grams and `LIKE` patterns bound to each statement, instead of
-- normalised in every statement by the PL/pgSQL `cafe_lookup_grams` and an `unnest` of
-- `cafe_like_pattern`. Measured with pgbench (64 clients, the rare-keyword page of `make bench`):
-- those two cost PostgreSQL about 50 of the statement's 140-150 µs (docs/performance.md, "Fifth
-- session"). Which grams a lookup takes — a keyword's hint when it is one of its own grams, else all
-- of them, none for a keyword that normalises to nothing — is now `SearchTerms.lookupGrams`.
-- `cafe_capped` stays, but the lookup calls it only past its cap, to raise (5-10% of the same page).
DROP FUNCTION cafe_lookup_grams(text[], text[]);
