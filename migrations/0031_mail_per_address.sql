-- Mails one address was sent in the last hour, whoever asked (MAIL_PER_ADDRESS_PER_HOUR): counted by address.
CREATE INDEX mail_outbox_recipient ON mail_outbox (lower(recipient), created_at);
