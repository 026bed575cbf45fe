-- Moderation: archived cafes, hidden comments and users' reports of comments.
--
-- What the public sees is decided by where a row is, not by a flag every query must remember:
--  * A cafe is listed while it has a `cafe_stats` row. Every listing, search and `/parse` cafe
--    query reads through `cafe_stats`, so archiving (which deletes that row) takes the cafe out of
--    all of them at once; restoring recreates it and the worker recounts.
--  * A hidden comment lives in `hidden_comments`, not `comments`. Hiding moves it (same id) and
--    restoring moves it back, so every comment listing, `/parse` query and the photo wall leave it
--    out, and the outbox triggers on `comments` keep the aggregates exact with no new code path.
ALTER TABLE cafes ADD COLUMN archived_at timestamptz;

CREATE TABLE hidden_comments (
    id         bigint      PRIMARY KEY,
    cafe_id    bigint      NOT NULL REFERENCES cafes (id) ON DELETE CASCADE,
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    detail     text        NOT NULL,
    star       smallint    NOT NULL,
    image_id   bigint      REFERENCES files (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    hidden_at  timestamptz NOT NULL DEFAULT now(),
    -- Why it is hidden, which says what brings it back: an operator's decision on the comment
    -- ('moderation'), its author's block ('block'), or its cafe's archiving ('archive').
    cause      text        NOT NULL CHECK (cause IN ('moderation', 'block', 'archive'))
);
CREATE INDEX hidden_comments_cafe_idx ON hidden_comments (cafe_id);
CREATE INDEX hidden_comments_user_idx ON hidden_comments (user_id, created_at DESC, id DESC);
CREATE INDEX hidden_comments_image_idx ON hidden_comments (image_id) WHERE image_id IS NOT NULL;

-- One report per user per comment. No foreign key to `comments`: a report stays with its comment
-- while the comment is hidden; reports of a comment that is gone are removed by housekeeping.
CREATE TABLE comment_reports (
    comment_id  bigint      NOT NULL,
    user_id     bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    reason      text        NOT NULL CHECK (char_length(reason) BETWEEN 1 AND 500),
    created_at  timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz,
    resolution  text        CHECK (resolution IN ('hidden', 'dismissed')),
    PRIMARY KEY (comment_id, user_id),
    CHECK ((resolved_at IS NULL) = (resolution IS NULL))
);
-- The moderation queue: the open reports, grouped by comment.
CREATE INDEX comment_reports_open_idx ON comment_reports (comment_id, created_at) WHERE resolved_at IS NULL;
