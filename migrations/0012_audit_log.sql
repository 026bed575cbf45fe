-- Every operator action: who, what, which object, when; and each field it changed, before and after.
-- Append-only: no row is ever changed or removed, by the service or anyone else with its role.
CREATE TABLE audit_log (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT now(),
    actor_id    bigint      NOT NULL REFERENCES users (id),
    action      text        NOT NULL,
    object_type text        NOT NULL,
    object_id   text        NOT NULL
);

CREATE TABLE audit_changes (
    audit_id bigint NOT NULL REFERENCES audit_log (id),
    field    text   NOT NULL,
    before   text,
    after    text,
    PRIMARY KEY (audit_id, field)
);

CREATE FUNCTION audit_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only' USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_is_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_is_append_only();
CREATE TRIGGER audit_changes_no_change BEFORE UPDATE OR DELETE ON audit_changes
    FOR EACH ROW EXECUTE FUNCTION audit_is_append_only();
CREATE TRIGGER audit_changes_no_truncate BEFORE TRUNCATE ON audit_changes
    FOR EACH STATEMENT EXECUTE FUNCTION audit_is_append_only();
