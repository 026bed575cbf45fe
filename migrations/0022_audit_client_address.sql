-- Where an operator action came from: the client address as the service found it (behind a proxy
-- named in TRUSTED_PROXIES, the one it forwarded). Null for the entries written before, and for
-- actions no request made.
ALTER TABLE audit_log ADD COLUMN address text CHECK (char_length(address) <= 64);
