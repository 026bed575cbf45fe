-- The client address an upload came from (its client key: an IPv4 address, or an IPv6 /64), so that a
-- quota per address stands beside the one per account: fresh accounts made from one address do not
-- multiply what it may upload. Rows from before this migration have none and count against no address.
ALTER TABLE files ADD COLUMN uploaded_from text CHECK (char_length(uploaded_from) <= 64);
CREATE INDEX files_uploaded_from_created_idx ON files (uploaded_from, created_at) WHERE uploaded_from IS NOT NULL;
