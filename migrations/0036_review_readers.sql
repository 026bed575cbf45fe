-- What review readers look for: helpful votes, owners' replies, each cafe's stars by count, and a rating
-- order that is fair to cafes with few comments (docs/architecture.md, "Votes, replies and the rating order").

-- Helpful votes. A vote is a row; `comments.helpful_count` is kept by the worker from `helpful_outbox`
-- (as `comment_sum` is from `aggregation_outbox`): a vote's transaction only inserts two small rows,
-- so votes on one busy comment never queue on its row lock. Votes of a blocked account are not
-- counted (and count again when it is unblocked); a deleted account's go with it. No foreign key to
-- `comments`: a hidden comment leaves that table for `hidden_comments` and keeps its votes.
CREATE TABLE helpful_votes (
    comment_id bigint      NOT NULL,
    user_id    bigint      NOT NULL REFERENCES users ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (comment_id, user_id)
);
CREATE INDEX helpful_votes_user_idx ON helpful_votes (user_id);

CREATE TABLE helpful_outbox (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    comment_id bigint NOT NULL
);

-- The worker's passes over it are recorded as `votes` runs.
ALTER TABLE job_runs DROP CONSTRAINT job_runs_kind_check;
ALTER TABLE job_runs ADD CONSTRAINT job_runs_kind_check CHECK (kind IN ('pass', 'votes', 'reconcile', 'clean-photos'));

ALTER TABLE comments ADD COLUMN helpful_count integer NOT NULL DEFAULT 0 CHECK (helpful_count >= 0);
ALTER TABLE hidden_comments ADD COLUMN helpful_count integer NOT NULL DEFAULT 0;

CREATE FUNCTION helpful_votes_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO helpful_outbox (comment_id) SELECT DISTINCT comment_id FROM changed_votes;
    RETURN NULL;
END $$;
CREATE TRIGGER helpful_votes_inserted AFTER INSERT ON helpful_votes REFERENCING NEW TABLE AS changed_votes
    FOR EACH STATEMENT EXECUTE FUNCTION helpful_votes_enqueue();
CREATE TRIGGER helpful_votes_deleted AFTER DELETE ON helpful_votes REFERENCING OLD TABLE AS changed_votes
    FOR EACH STATEMENT EXECUTE FUNCTION helpful_votes_enqueue();

-- Blocking or unblocking an account recounts every comment it voted on.
CREATE FUNCTION users_block_recounts_votes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO helpful_outbox (comment_id) SELECT comment_id FROM helpful_votes WHERE user_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER users_block_recounts_votes AFTER UPDATE OF blocked_at ON users
    FOR EACH ROW WHEN (OLD.blocked_at IS DISTINCT FROM NEW.blocked_at) EXECUTE FUNCTION users_block_recounts_votes();

-- A comment's busy orders: most helpful first, most stars first (each then newest).
CREATE INDEX comments_cafe_helpful_idx ON comments (cafe_id, helpful_count DESC, created_at DESC, id DESC);
CREATE INDEX comments_cafe_stars_idx ON comments (cafe_id, star DESC, created_at DESC, id DESC);

-- Owners: accounts an administrator has made owners of a cafe. They may answer its comments.
CREATE TABLE cafe_owners (
    cafe_id    bigint      NOT NULL REFERENCES cafes ON DELETE CASCADE,
    user_id    bigint      NOT NULL REFERENCES users ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (cafe_id, user_id)
);
CREATE INDEX cafe_owners_user_idx ON cafe_owners (user_id);
CREATE TRIGGER cafe_owners_notify_pages AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON cafe_owners
    FOR EACH STATEMENT EXECUTE FUNCTION notify_page_change('cafes');

-- The owners' reply to a comment: one per comment, on the comment's own row, so that it moves with the
-- comment when it is hidden and restored, goes when the comment goes, and changes the comment's pages
-- and live events through the triggers the comment already has. `reply_by`: the owner who wrote it last.
ALTER TABLE comments
    ADD COLUMN reply_text       text CHECK (char_length(reply_text) BETWEEN 1 AND 1000),
    ADD COLUMN reply_by         bigint REFERENCES users ON DELETE SET NULL,
    ADD COLUMN reply_created_at timestamptz(3),
    ADD COLUMN reply_updated_at timestamptz(3),
    ADD COLUMN reply_hidden_at  timestamptz,
    ADD CONSTRAINT comments_reply_whole CHECK (
        (reply_text IS NULL) = (reply_created_at IS NULL) AND (reply_text IS NULL) = (reply_updated_at IS NULL)
        AND (reply_hidden_at IS NULL OR reply_text IS NOT NULL));
ALTER TABLE hidden_comments
    ADD COLUMN reply_text       text,
    ADD COLUMN reply_by         bigint REFERENCES users ON DELETE SET NULL,
    ADD COLUMN reply_created_at timestamptz(3),
    ADD COLUMN reply_updated_at timestamptz(3),
    ADD COLUMN reply_hidden_at  timestamptz;

-- A comment gone for good (not moved between `comments` and `hidden_comments`) takes its votes along.
-- Deferred to the commit, when a move is complete whichever table it deleted from first.
CREATE FUNCTION comment_votes_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM comments WHERE id = OLD.id) AND NOT EXISTS (SELECT 1 FROM hidden_comments WHERE id = OLD.id) THEN
        DELETE FROM helpful_votes WHERE comment_id = OLD.id;
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER comments_votes_gone AFTER DELETE ON comments DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION comment_votes_gone();
CREATE CONSTRAINT TRIGGER hidden_comments_votes_gone AFTER DELETE ON hidden_comments DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION comment_votes_gone();

-- The owners' reply is mailed to the comment's author once: the mail names the comment.
ALTER TABLE mail_outbox ADD COLUMN comment_id bigint;
ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_kind_check;
ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_kind_check
    CHECK (kind IN ('password_reset', 'email_verification', 'owner_reply'));
CREATE UNIQUE INDEX mail_outbox_owner_reply_idx ON mail_outbox (comment_id) WHERE kind = 'owner_reply';

-- The stars by count, kept by the aggregation pass in the same statement as `comment_sum` and
-- `comment_amount`, which they always add up to (checked by the constraint).
--
-- The rating score: the weighted (Bayesian) average (commentAmount + m·C) / (commentSum + m), C the mean
-- star over every visible comment and m `RATING_PRIOR_WEIGHT`; NULL without comments. It is kept twice,
-- in two slots, each computed with its own prior (C and m) as `rating_prior` holds them: the readers'
-- order is the slot of the current generation, while a refresh after C moved rewrites the other slot in
-- steps and then makes it current. A page walk therefore never meets scores half rewritten: its cursor
-- names the generation it started in, whose slot the passes keep up to date meanwhile.
ALTER TABLE cafe_stats
    ADD COLUMN stars_1 integer NOT NULL DEFAULT 0,
    ADD COLUMN stars_2 integer NOT NULL DEFAULT 0,
    ADD COLUMN stars_3 integer NOT NULL DEFAULT 0,
    ADD COLUMN rating_score_0 numeric(7, 6),
    ADD COLUMN rating_score_1 numeric(7, 6);

-- `generation`: slot `generation % 2` is the readers'. `refreshed_through`: while the worker rewrites the
-- other slot, the last cafe id done; NULL when no refresh is under way. `flipped_at`: when the current
-- generation began (a refresh does not start rewriting the slot readers just left until they have all
-- moved on; docs/architecture.md).
CREATE TABLE rating_prior (
    one               boolean       PRIMARY KEY DEFAULT true CHECK (one),
    generation        bigint        NOT NULL DEFAULT 0,
    mean_0            numeric(7, 6) NOT NULL CHECK (mean_0 BETWEEN 1 AND 3),
    weight_0          integer       NOT NULL CHECK (weight_0 >= 0),
    mean_1            numeric(7, 6) NOT NULL CHECK (mean_1 BETWEEN 1 AND 3),
    weight_1          integer       NOT NULL CHECK (weight_1 >= 0),
    refreshed_through bigint,
    flipped_at        timestamptz   NOT NULL DEFAULT now()
);
-- A new generation changes every score shown.
CREATE TRIGGER rating_prior_notify_pages AFTER UPDATE OF generation ON rating_prior
    FOR EACH STATEMENT EXECUTE FUNCTION notify_page_change('cafes');

CREATE FUNCTION rating_score(amount integer, n integer, mean numeric, weight integer) RETURNS numeric
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN n > 0 THEN round((amount + weight * mean) / (n + weight), 6) END;

INSERT INTO rating_prior (mean_0, weight_0, mean_1, weight_1)
SELECT c, 5, c, 5 FROM (SELECT coalesce(round(sum(star)::numeric / nullif(count(*), 0), 6), 2) AS c FROM comments) mean;

UPDATE cafe_stats s SET stars_1 = a.n1, stars_2 = a.n2, stars_3 = a.n3,
       rating_score_0 = rating_score(s.comment_amount, s.comment_sum, p.mean_0, p.weight_0),
       rating_score_1 = rating_score(s.comment_amount, s.comment_sum, p.mean_1, p.weight_1)
FROM (SELECT cafe_id, count(*) FILTER (WHERE star = 1)::int AS n1, count(*) FILTER (WHERE star = 2)::int AS n2,
             count(*) FILTER (WHERE star = 3)::int AS n3
      FROM comments GROUP BY cafe_id) a, rating_prior p
WHERE s.cafe_id = a.cafe_id;

-- Stats that had drifted (the reconcile's business) must not stop the migration: they take the truth now.
UPDATE cafe_stats s SET comment_sum = stars_1 + stars_2 + stars_3, comment_amount = stars_1 + 2 * stars_2 + 3 * stars_3,
       rating_score_0 = rating_score(stars_1 + 2 * stars_2 + 3 * stars_3, stars_1 + stars_2 + stars_3, p.mean_0, p.weight_0),
       rating_score_1 = rating_score(stars_1 + 2 * stars_2 + 3 * stars_3, stars_1 + stars_2 + stars_3, p.mean_1, p.weight_1)
FROM rating_prior p
WHERE (stars_1 + stars_2 + stars_3, stars_1 + 2 * stars_2 + 3 * stars_3) <> (comment_sum, comment_amount);

ALTER TABLE cafe_stats ADD CONSTRAINT cafe_stats_stars_add_up CHECK (
    stars_1 >= 0 AND stars_2 >= 0 AND stars_3 >= 0
    AND stars_1 + stars_2 + stars_3 = comment_sum AND stars_1 + 2 * stars_2 + 3 * stars_3 = comment_amount);

DROP INDEX cafe_stats_rating_idx;
CREATE INDEX cafe_stats_rating_0_idx ON cafe_stats ((coalesce(rating_score_0, -1)), comment_sum, created_at, cafe_id);
CREATE INDEX cafe_stats_rating_1_idx ON cafe_stats ((coalesce(rating_score_1, -1)), comment_sum, created_at, cafe_id);
