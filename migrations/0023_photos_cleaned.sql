-- Photos are decoded, cleaned and re-encoded on upload (`PhotoCodec`); what is stored is never the
-- uploaded bytes. Their sizes for smaller screens are made on first request and kept. Their bytes
-- live in PostgreSQL (`bytes`) or in an S3-compatible object store (`object_key`), per row, so a
-- move between the two (`cafe photos move`) can go one photo at a time and be resumed.
ALTER TABLE files
    ADD COLUMN width integer CHECK (width > 0),
    ADD COLUMN height integer CHECK (height > 0),
    -- NULL: stored before cleaning existed, as uploaded. The `clean-photos` job re-encodes those, and
    -- one is cleaned on its first request if the job has not reached it yet; it is never served as it is.
    ADD COLUMN cleaned_at timestamptz,
    ADD COLUMN object_key text UNIQUE,
    ALTER COLUMN bytes DROP NOT NULL,
    ADD CONSTRAINT files_bytes_somewhere CHECK ((bytes IS NULL) <> (object_key IS NULL)),
    ADD CONSTRAINT files_cleaned_has_size CHECK (cleaned_at IS NULL OR (width IS NOT NULL AND height IS NOT NULL));
CREATE INDEX files_uncleaned_idx ON files (id) WHERE cleaned_at IS NULL;
CREATE INDEX files_in_object_store_idx ON files (id) WHERE object_key IS NOT NULL;

-- A photo's sizes (`GET /v1/files/{id}?w=`): `width` is what was served for a requested width (never
-- more than the photo's), one row per encoding.
CREATE TABLE file_sizes (
    file_id    bigint      NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    width      integer     NOT NULL CHECK (width > 0),
    encoding   text        NOT NULL CHECK (encoding IN ('jpeg', 'png', 'webp')),
    height     integer     NOT NULL CHECK (height > 0),
    size       integer     NOT NULL CHECK (size >= 0),
    sha256     bytea       NOT NULL,
    bytes      bytea,
    object_key text        UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (file_id, width, encoding),
    CHECK ((bytes IS NULL) <> (object_key IS NULL))
);

-- Objects in the object store that no row owns: written *before* an object is put (so a crash
-- between the put and the row's commit leaves a note, not a lost object), removed in the transaction
-- that inserts the row, and added when a row that owns an object is deleted. Housekeeping deletes the
-- objects whose `due_at` has passed, then the notes.
CREATE TABLE object_deletions (
    object_key text        PRIMARY KEY,
    due_at     timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION note_object_deletion() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO object_deletions (object_key)
    SELECT object_key FROM gone WHERE object_key IS NOT NULL
    ON CONFLICT (object_key) DO UPDATE SET due_at = now();
    RETURN NULL;
END $$;
CREATE TRIGGER files_note_object_deletion AFTER DELETE ON files
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION note_object_deletion();
CREATE TRIGGER file_sizes_note_object_deletion AFTER DELETE ON file_sizes
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION note_object_deletion();

-- Who may see a photo changes when something stops showing it: a comment deleted, hidden or given
-- another photo, a cafe archived (its `cafe_stats` row goes) or given another photo. The page cache
-- keeps public photos (kind 'photos') and drops them on these, not on every new comment.
CREATE TRIGGER comments_notify_photos AFTER DELETE OR UPDATE OF image_id OR TRUNCATE ON comments
    FOR EACH STATEMENT EXECUTE FUNCTION notify_page_change('photos');
CREATE TRIGGER cafes_notify_photos AFTER DELETE OR UPDATE OF image_id OR TRUNCATE ON cafes
    FOR EACH STATEMENT EXECUTE FUNCTION notify_page_change('photos');
CREATE TRIGGER cafe_stats_notify_photos AFTER DELETE OR TRUNCATE ON cafe_stats
    FOR EACH STATEMENT EXECUTE FUNCTION notify_page_change('photos');
CREATE TRIGGER files_notify_photos AFTER DELETE OR UPDATE OR TRUNCATE ON files
    FOR EACH STATEMENT EXECUTE FUNCTION notify_page_change('photos');

-- The worker's `clean-photos` job records each step that cleaned something.
ALTER TABLE job_runs DROP CONSTRAINT job_runs_kind_check;
ALTER TABLE job_runs ADD CONSTRAINT job_runs_kind_check CHECK (kind IN ('pass', 'reconcile', 'clean-photos'));
