-- Accounts people can recover and leave: single-use tokens mailed for a password reset or an
-- e-mail verification, the mail outbox the worker delivers, a language per account, and what an
-- account's deletion keeps (its reports, without the reporter; the audit log, by the actor's id).

-- The language mails to this account are written in; NULL: the request's Accept-Language.
ALTER TABLE users ADD COLUMN language text CHECK (language IN ('ja', 'en'));
-- A reset is asked for by address.
CREATE INDEX users_email_lower_idx ON users (lower(email)) WHERE email IS NOT NULL;

-- Tokens are shown once, in a mail, and stored only as their SHA-256. `email` is the address the
-- mail went to: a verification holds only while the account still has it.
CREATE TABLE account_tokens (
    token_hash bytea       PRIMARY KEY,
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose    text        NOT NULL CHECK (purpose IN ('password_reset', 'email_verification')),
    email      text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX account_tokens_user_idx ON account_tokens (user_id, purpose);
CREATE INDEX account_tokens_expiry_idx ON account_tokens (expires_at);

-- One row per message, written in the transaction of what causes it. A request only records what
-- to send (`kind`, `recipient`, the language and the link base); the worker resolves the account,
-- makes the token and the text (`subject`, `body`) and delivers it. A reset for an address no
-- account has so costs the request exactly what one for a known address does.
CREATE TABLE mail_outbox (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind            text        NOT NULL CHECK (kind IN ('password_reset', 'email_verification')),
    recipient       text        NOT NULL CHECK (char_length(recipient) <= 254),
    -- The account a verification is for; a reset's is found by `recipient` when it is prepared.
    -- Its deletion takes its pending and past mail with it.
    user_id         bigint      REFERENCES users (id) ON DELETE CASCADE,
    language        text        NOT NULL CHECK (language IN ('ja', 'en')),
    base_url        text        NOT NULL CHECK (char_length(base_url) <= 512),
    created_at      timestamptz NOT NULL DEFAULT now(),
    subject         text,
    -- The text, links and all, until it is sent: a sent message keeps no credential.
    body            text,
    -- When its links stop working; an unsent message past it is not sent.
    expires_at      timestamptz,
    state           text        NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'sent', 'kept', 'skipped', 'throttled', 'failed', 'expired')),
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    finished_at     timestamptz,
    CONSTRAINT mail_outbox_finished CHECK ((state = 'pending') = (finished_at IS NULL))
);
CREATE INDEX mail_outbox_due_idx ON mail_outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX mail_outbox_user_idx ON mail_outbox (user_id, created_at) WHERE user_id IS NOT NULL;
CREATE INDEX mail_outbox_finished_idx ON mail_outbox (finished_at) WHERE finished_at IS NOT NULL;

-- A deleted account's reports stay, without the reporter.
ALTER TABLE comment_reports
    DROP CONSTRAINT comment_reports_pkey,
    DROP CONSTRAINT comment_reports_user_id_fkey,
    ALTER COLUMN user_id DROP NOT NULL,
    ADD CONSTRAINT comment_reports_comment_id_user_id_key UNIQUE (comment_id, user_id),
    ADD CONSTRAINT comment_reports_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE SET NULL;

-- The audit log is append-only and outlives the accounts that acted: it names the actor by id.
ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_id_fkey;
