-- Failed log-ins are counted per (username, client address): an attacker's failures slow down
-- only the attacker's own attempts at that name, never the owner's from elsewhere.
ALTER TABLE login_failures ADD COLUMN address text NOT NULL DEFAULT '';
DROP INDEX login_failures_key_idx;
CREATE INDEX login_failures_key_address_idx ON login_failures (username_key, address, failed_at DESC);
