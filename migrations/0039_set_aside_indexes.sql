-- A bulk load (`cafe seed` of at least as many cafes as there are) drops the non-unique indexes of the
-- tables it writes and builds them again after it: at 200,000 cafes the seed took 49–51 s instead of 56 s.
-- The definitions are recorded here in the transaction that drops them, so that a load that dies midway
-- leaves them behind: the next command that applies migrations (`Database.migrate`) builds what is
-- listed (`SetAsideIndexes`).
CREATE TABLE set_aside_indexes (
    name text PRIMARY KEY,
    definition text NOT NULL,
    -- The table's size when the index was set aside: the largest are built first.
    table_bytes bigint NOT NULL
);

-- Records and drops the non-unique indexes of `tables`. Unique ones and keys stay: they keep the rows
-- right while they arrive. GIN indexes (the gram index) stay too: built after the rows the gram index
-- took as long as its upkeep during them, on one core instead of two.
CREATE FUNCTION set_aside_indexes_of(tables regclass[]) RETURNS void LANGUAGE plpgsql AS $$
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
