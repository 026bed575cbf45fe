-- An operator may block an account: its log-ins are refused and its sessions stop working.
ALTER TABLE users ADD COLUMN blocked_at timestamptz;
