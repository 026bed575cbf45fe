-- 0029: every request process keeps the live sessions it has looked up in memory (`SessionCache`)
-- and forgets a user's as soon as that user or one of its sessions changes: each committed change
-- notifies channel `cafe_sessions` with the ids of the users it touched, comma-separated, or '*' past
-- 100 of them (a bulk change empties every cache). Statement-level where a batch may touch many rows;
-- PostgreSQL delivers a notification only when its transaction commits. Deleting sessions that have
-- expired notifies nothing (no cache answers an expired session), nor does recording a session's last
-- write (`last_write_lsn`), nor a new session (it is looked up before it is kept).
CREATE FUNCTION notify_session_users(ids text) RETURNS void LANGUAGE sql AS $$
    SELECT pg_notify('cafe_sessions', ids) WHERE ids IS NOT NULL
$$;

CREATE FUNCTION notify_changed_users() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM notify_session_users((SELECT CASE WHEN count(*) > 100 THEN '*' ELSE string_agg(id::text, ',') END
                                  FROM (SELECT DISTINCT id FROM changed LIMIT 101) c));
    RETURN NULL;
END $$;

CREATE FUNCTION notify_ended_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM notify_session_users((SELECT CASE WHEN count(*) > 100 THEN '*' ELSE string_agg(user_id::text, ',') END
                                  FROM (SELECT DISTINCT user_id FROM ended WHERE expires_at > now() LIMIT 101) e));
    RETURN NULL;
END $$;

CREATE FUNCTION notify_moved_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM notify_session_users(OLD.user_id::text);
    IF NEW.user_id <> OLD.user_id THEN PERFORM notify_session_users(NEW.user_id::text); END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION notify_all_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM notify_session_users('*');
    RETURN NULL;
END $$;

CREATE TRIGGER users_notify_sessions_updated AFTER UPDATE ON users
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION notify_changed_users();
CREATE TRIGGER users_notify_sessions_deleted AFTER DELETE ON users
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION notify_changed_users();
CREATE TRIGGER users_notify_sessions_truncated AFTER TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION notify_all_sessions();
CREATE TRIGGER sessions_notify_deleted AFTER DELETE ON sessions
    REFERENCING OLD TABLE AS ended FOR EACH STATEMENT EXECUTE FUNCTION notify_ended_sessions();
CREATE TRIGGER sessions_notify_moved AFTER UPDATE OF user_id, expires_at, token_hash ON sessions
    FOR EACH ROW EXECUTE FUNCTION notify_moved_session();
CREATE TRIGGER sessions_notify_truncated AFTER TRUNCATE ON sessions
    FOR EACH STATEMENT EXECUTE FUNCTION notify_all_sessions();
