-- A mail's link is written into its text only as it is sent (MailDelivery): the outbox keeps the text
-- with a placeholder, and account_tokens the hash of the token each attempt carries, tied to its mail so
-- that the next attempt's token replaces it.
ALTER TABLE account_tokens ADD COLUMN mail_id bigint;
CREATE INDEX account_tokens_mail ON account_tokens (mail_id) WHERE mail_id IS NOT NULL;

-- Texts written before this held their links: a pending one is written again at its next attempt, a kept
-- one keeps its subject and loses its text.
UPDATE mail_outbox SET subject = NULL, body = NULL WHERE state = 'pending' AND body IS NOT NULL;
UPDATE mail_outbox SET body = NULL WHERE state = 'kept' AND body IS NOT NULL;
