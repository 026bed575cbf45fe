-- 0001: the schema of the reviews API. Ids are bigint identities, exposed to clients as opaque strings.
-- Names: Cafe is CafeMaster in the original app, Comment is CafeTransactionComment.

CREATE TABLE users (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    username       text        NOT NULL CHECK (char_length(username) BETWEEN 3 AND 40),
    password_hash  text        NOT NULL,          -- argon2id, libsodium crypto_pwhash_str format
    email          text,
    email_verified boolean     NOT NULL DEFAULT false,
    age            integer     CHECK (age BETWEEN 0 AND 150),
    is_admin       boolean     NOT NULL DEFAULT false,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
-- Usernames are unique regardless of case.
CREATE UNIQUE INDEX users_username_lower_key ON users (lower(username));

CREATE TABLE sessions (
    token_hash bytea       PRIMARY KEY,           -- SHA-256 of the bearer token; the token itself is never stored
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);

-- Failed logins per username (lower-cased), for the 5-failures-in-15-minutes lockout. Kept in the
-- database so every API replica sees the same count.
CREATE TABLE login_failures (
    username_key text        NOT NULL,
    failed_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_failures_key_idx ON login_failures (username_key, failed_at DESC);

-- Image bytes live in PostgreSQL, as Parse kept files in its database by default.
CREATE TABLE files (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id     bigint      REFERENCES users (id) ON DELETE SET NULL,
    content_type text        NOT NULL,
    size         integer     NOT NULL CHECK (size >= 0),
    sha256       bytea       NOT NULL,
    bytes        bytea       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE cafes (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name         text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    catch_copy   text        NOT NULL DEFAULT '' CHECK (char_length(catch_copy) <= 200),
    introduction text        NOT NULL DEFAULT '' CHECK (char_length(introduction) <= 5000),
    image_id     bigint      REFERENCES files (id) ON DELETE SET NULL,
    publish_date text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
-- Newest first with keyset pagination: (created_at, id) descending.
CREATE INDEX cafes_created_at_id_idx ON cafes (created_at DESC, id DESC);
CREATE INDEX cafes_image_id_idx ON cafes (image_id) WHERE image_id IS NOT NULL;

-- Aggregates in a narrow table: recomputing them rewrites small rows, not wide cafe rows.
-- Only the aggregation worker writes comment_sum and comment_amount.
CREATE TABLE cafe_stats (
    cafe_id        bigint  PRIMARY KEY REFERENCES cafes (id) ON DELETE CASCADE,
    comment_sum    integer NOT NULL DEFAULT 0 CHECK (comment_sum >= 0),
    comment_amount integer NOT NULL DEFAULT 0 CHECK (comment_amount >= 0)
);

-- Statement-level with a transition table: a bulk insert of cafes costs one INSERT here, not one per row.
CREATE FUNCTION cafes_create_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO cafe_stats (cafe_id) SELECT id FROM new_cafes;
    RETURN NULL;
END $$;
CREATE TRIGGER cafes_create_stats AFTER INSERT ON cafes
    REFERENCING NEW TABLE AS new_cafes FOR EACH STATEMENT EXECUTE FUNCTION cafes_create_stats();

CREATE TABLE comments (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    cafe_id    bigint      NOT NULL REFERENCES cafes (id) ON DELETE CASCADE,
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    detail     text        NOT NULL CHECK (char_length(detail) BETWEEN 1 AND 2000),
    star       smallint    NOT NULL CHECK (star BETWEEN 1 AND 3),
    image_id   bigint      REFERENCES files (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
-- star is included so the aggregation pass counts a cafe's comments from the index alone (index-only scan).
CREATE INDEX comments_cafe_created_idx ON comments (cafe_id, created_at DESC, id DESC) INCLUDE (star);
CREATE INDEX comments_user_id_idx ON comments (user_id);
CREATE INDEX comments_image_id_idx ON comments (image_id) WHERE image_id IS NOT NULL;

-- Append-only outbox: every comment change that can move a cafe's aggregates appends the cafe id
-- here in the same transaction. Workers drain it with FOR UPDATE SKIP LOCKED. Append-only on purpose:
-- a de-duplicating "dirty set" loses an update while a comment transaction is still open.
CREATE TABLE aggregation_outbox (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    cafe_id    bigint      NOT NULL,              -- no FK: the cafe may be gone by the time a worker looks
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Statement-level triggers with transition tables (one INSERT per statement, however many rows).
-- An update enqueues only when it can move an aggregate: a star change (old cafe) or a move to
-- another cafe (old and new cafe); editing the text alone does not.
CREATE FUNCTION comments_enqueue_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO aggregation_outbox (cafe_id) SELECT cafe_id FROM new_comments;
    RETURN NULL;
END $$;
CREATE TRIGGER comments_enqueue_inserted AFTER INSERT ON comments
    REFERENCING NEW TABLE AS new_comments FOR EACH STATEMENT EXECUTE FUNCTION comments_enqueue_inserted();

CREATE FUNCTION comments_enqueue_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO aggregation_outbox (cafe_id) SELECT cafe_id FROM old_comments;
    RETURN NULL;
END $$;
CREATE TRIGGER comments_enqueue_deleted AFTER DELETE ON comments
    REFERENCING OLD TABLE AS old_comments FOR EACH STATEMENT EXECUTE FUNCTION comments_enqueue_deleted();

CREATE FUNCTION comments_enqueue_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO aggregation_outbox (cafe_id)
    SELECT o.cafe_id FROM old_comments o JOIN new_comments n ON n.id = o.id
    WHERE o.star <> n.star OR o.cafe_id <> n.cafe_id
    UNION ALL
    SELECT n.cafe_id FROM old_comments o JOIN new_comments n ON n.id = o.id
    WHERE o.cafe_id <> n.cafe_id;
    RETURN NULL;
END $$;
CREATE TRIGGER comments_enqueue_updated AFTER UPDATE ON comments
    REFERENCING OLD TABLE AS old_comments NEW TABLE AS new_comments FOR EACH STATEMENT EXECUTE FUNCTION comments_enqueue_updated();
