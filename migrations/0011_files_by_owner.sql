-- A user's uploads of the last day, summed for the daily upload quota.
CREATE INDEX files_owner_created_idx ON files (owner_id, created_at);
