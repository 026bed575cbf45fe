-- Every process keeps rendered public pages in memory (`PageCache`) and drops them when what they
-- show changes: each committed change to cafes, their aggregates or comments notifies channel
-- `cafe_pages` with what kind of thing changed ('cafes' or 'comments'). Statement-level, so a
-- batch notifies once; PostgreSQL delivers a notification only when its transaction commits.
CREATE FUNCTION notify_page_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('cafe_pages', TG_ARGV[0]);
    RETURN NULL;
END $$;

CREATE TRIGGER cafes_notify_pages AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON cafes
    FOR EACH STATEMENT EXECUTE FUNCTION notify_page_change('cafes');
CREATE TRIGGER cafe_stats_notify_pages AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON cafe_stats
    FOR EACH STATEMENT EXECUTE FUNCTION notify_page_change('cafes');
CREATE TRIGGER comments_notify_pages AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON comments
    FOR EACH STATEMENT EXECUTE FUNCTION notify_page_change('comments');
