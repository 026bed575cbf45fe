-- UTS #39 confusable skeletons of the lower-cased usernames, so that no account can take a name that
-- looks the same as another's (Cyrillic `сосоа` and Latin `cocoa`). ICU computes them in the service, which fills
-- this column for accounts made before it (and any row written without one) when it starts; a new
-- name is checked against it under a lock on its skeleton. Not unique: names that were here before
-- the rule may share one, and keep their accounts.
ALTER TABLE users ADD COLUMN username_skeleton text;
CREATE INDEX users_username_skeleton_idx ON users (username_skeleton);
