-- Where a cafe is and when it is open (docs/architecture.md, "Places and opening hours"): a point on
-- PostGIS's geography (distances in metres on the sphere, a GiST index for the nearest-first order),
-- an address, an IANA time zone and the opening hours as the API writes them.
CREATE EXTENSION IF NOT EXISTS postgis;

ALTER TABLE cafes
    ADD COLUMN location geography(Point, 4326),
    ADD COLUMN address text CHECK (char_length(address) <= 300),
    ADD COLUMN time_zone text,
    ADD COLUMN opening_hours jsonb,
    -- Kept from `opening_hours` by a trigger (below): the week's open minutes and the span of the
    -- exception dates, which make "is it open now" a few operations instead of a walk through the JSON.
    ADD COLUMN opening_week int4multirange,
    ADD COLUMN opening_exceptions daterange,
    ADD CONSTRAINT cafes_hours_need_zone CHECK (opening_hours IS NULL OR time_zone IS NOT NULL);

-- Cafes by distance: `ORDER BY location <-> point` walks it nearest first. Not partial: every query
-- that orders by distance can use it (an archived cafe is one filtered row).
CREATE INDEX cafes_location_idx ON cafes USING gist (location);

-- The week's open minutes in local time, Monday 00:00 = 0 to Sunday 24:00 = 10080: each interval of
-- each weekday ('HH:MM', '24:00' is 1440), one that ends before it starts running past midnight,
-- Sunday's wrapping into Monday. PL/pgSQL over the JSON, not SQL over its rows: 17 µs a cafe against
-- 172 µs (a seed writes a million).
CREATE FUNCTION cafe_week_minutes(hours jsonb) RETURNS int4multirange
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    days CONSTANT text[] := ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
    spans int4range[] := '{}';
    intervals jsonb;
    starts text;
    ends text;
    lo int;
    hi int;
BEGIN
    IF hours IS NULL THEN RETURN NULL; END IF;
    FOR n IN 0..6 LOOP
        intervals := hours -> days[n + 1];
        CONTINUE WHEN intervals IS NULL;
        FOR i IN 0 .. jsonb_array_length(intervals) - 1 LOOP
            starts := intervals -> i ->> 0;
            ends := intervals -> i ->> 1;
            lo := n * 1440 + substr(starts, 1, 2)::int * 60 + substr(starts, 4, 2)::int;
            hi := n * 1440 + substr(ends, 1, 2)::int * 60 + substr(ends, 4, 2)::int;
            IF hi <= lo THEN hi := hi + 1440; END IF;
            spans := spans || int4range(lo, least(hi, 10080));
            IF hi > 10080 THEN spans := spans || int4range(0, hi - 10080); END IF;
        END LOOP;
    END LOOP;
    RETURN int4multirange(VARIADIC spans);
END $$;

-- From the first to the last exception date (NULL without exceptions).
CREATE FUNCTION cafe_exception_days(hours jsonb) RETURNS daterange
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    IF coalesce(jsonb_array_length(hours -> 'exceptions'), 0) = 0 THEN RETURN NULL; END IF;
    RETURN (SELECT daterange(min((e->>'date')::date), max((e->>'date')::date), '[]') FROM jsonb_array_elements(hours -> 'exceptions') e);
END $$;

CREATE FUNCTION cafes_keep_opening_week() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.opening_week := cafe_week_minutes(NEW.opening_hours);
    NEW.opening_exceptions := cafe_exception_days(NEW.opening_hours);
    RETURN NEW;
END $$;
CREATE TRIGGER cafes_keep_opening_week BEFORE INSERT OR UPDATE OF opening_hours ON cafes
    FOR EACH ROW EXECUTE FUNCTION cafes_keep_opening_week();

-- THE DEFINITION of when a cafe is open: the instants of its intervals, each local date's own (an
-- exception's when the date has one, else its weekday's), local times read in the cafe's zone as
-- PostgreSQL reads them (`AT TIME ZONE`), an interval that ends before it starts running into the
-- next day. `first_day`..`last_day` are local dates.
CREATE FUNCTION cafe_day_hours(hours jsonb, day date) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(
        (SELECT e->'hours' FROM jsonb_array_elements(coalesce(hours->'exceptions', '[]')) e
         WHERE e->>'date' = to_char(day, 'YYYY-MM-DD') LIMIT 1),
        hours->((ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'])[extract(isodow FROM day)::int]),
        '[]')
$$;
CREATE FUNCTION cafe_open_spans(hours jsonb, zone text, first_day date, last_day date) RETURNS tstzmultirange
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce(range_agg(tstzrange(o.opens, greatest(o.opens, o.closes))), '{}')
    FROM generate_series(first_day::timestamp, last_day::timestamp, interval '1 day') AS d(day),
         jsonb_array_elements(cafe_day_hours(hours, d.day::date)) AS i(span),
         LATERAL (SELECT (i.span->>0)::interval AS starts, (i.span->>1)::interval AS ends) t,
         -- A local time a daylight-saving change skips can put an end before its start: an empty span.
         LATERAL (SELECT (d.day + t.starts) AT TIME ZONE zone AS opens,
                         (d.day + t.ends + CASE WHEN t.ends <= t.starts THEN interval '1 day' ELSE interval '0' END) AT TIME ZONE zone AS closes) o
$$;

-- Whether the spans above are the week's minutes shifted by one constant offset around `moment`: no
-- exception date from the day before to nine days on, and the zone's offset the same from a day
-- before to nine days after. Then the week's minutes answer exactly what the spans would, in a few
-- microseconds instead of hundreds (docs/performance.md, "Finding a cafe").
CREATE FUNCTION cafe_hours_regular(exceptions daterange, zone text, moment timestamptz) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
    RETURN (exceptions IS NULL OR NOT exceptions && daterange((moment AT TIME ZONE zone)::date - 1, (moment AT TIME ZONE zone)::date + 10))
       AND (moment + interval '9 days') AT TIME ZONE zone - (moment - interval '1 day') AT TIME ZONE zone = interval '10 days';

-- The local minute of the week at `moment` (Monday 00:00 = 0).
CREATE FUNCTION cafe_week_minute(zone text, moment timestamptz) RETURNS int
LANGUAGE sql STABLE PARALLEL SAFE
    RETURN floor(extract(epoch FROM (moment AT TIME ZONE zone) - date_trunc('week', moment AT TIME ZONE zone)) / 60)::int;

-- Whether the cafe is open at `moment`; NULL without opening hours.
CREATE FUNCTION cafe_open_at(hours jsonb, week int4multirange, exceptions daterange, zone text, moment timestamptz) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
    RETURN CASE WHEN hours IS NULL THEN NULL
                WHEN cafe_hours_regular(exceptions, zone, moment) THEN week @> cafe_week_minute(zone, moment)
                ELSE cafe_open_spans(hours, zone, (moment AT TIME ZONE zone)::date - 1, (moment AT TIME ZONE zone)::date) @> moment END;

-- When the cafe next opens or closes after `moment` (it opens there if it is closed at `moment`), at
-- most 8 days ahead; NULL without hours or when nothing changes in that time.
CREATE FUNCTION cafe_next_change(hours jsonb, week int4multirange, exceptions daterange, zone text, moment timestamptz) RETURNS timestamptz
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
    minute int;
    current int4range;
    target int;
    span tstzrange;
    horizon timestamptz := moment + interval '8 days';
BEGIN
    IF hours IS NULL THEN RETURN NULL; END IF;
    IF NOT cafe_hours_regular(exceptions, zone, moment) THEN
        SELECT s INTO span
        FROM unnest(cafe_open_spans(hours, zone, (moment AT TIME ZONE zone)::date - 1, (moment AT TIME ZONE zone)::date + 9)) s
        WHERE upper(s) > moment ORDER BY lower(s) LIMIT 1;
        IF span IS NULL THEN RETURN NULL; END IF;
        RETURN (SELECT t FROM (SELECT CASE WHEN span @> moment THEN upper(span) ELSE lower(span) END AS t) c WHERE t <= horizon);
    END IF;
    minute := cafe_week_minute(zone, moment);
    SELECT s INTO current FROM unnest(week) s WHERE s @> minute;
    IF current IS NOT NULL THEN
        target := upper(current);
        IF target = 10080 THEN
            IF lower(current) = 0 THEN RETURN NULL; END IF;   -- open all week
            target := 10080 + coalesce((SELECT upper(s) FROM unnest(week) s WHERE lower(s) = 0), 0);
        END IF;
    ELSE
        target := coalesce((SELECT min(lower(s)) FROM unnest(week) s WHERE lower(s) > minute),
                           (SELECT min(lower(s)) + 10080 FROM unnest(week) s));
        IF target IS NULL THEN RETURN NULL; END IF;   -- closed all week
    END IF;
    RETURN (date_trunc('week', moment AT TIME ZONE zone) + target * interval '1 minute') AT TIME ZONE zone;
END $$;

-- The live feed tells of a cafe's new place or hours as of any other edit.
DROP TRIGGER cafes_live_updated ON cafes;
CREATE CONSTRAINT TRIGGER cafes_live_updated AFTER UPDATE ON cafes DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (live_feed_enabled() AND OLD.archived_at IS NULL AND NEW.archived_at IS NULL AND (
        OLD.name, OLD.catch_copy, OLD.introduction, OLD.image_id, OLD.publish_date, OLD.updated_at,
        OLD.location, OLD.address, OLD.time_zone, OLD.opening_hours)
        IS DISTINCT FROM (NEW.name, NEW.catch_copy, NEW.introduction, NEW.image_id, NEW.publish_date, NEW.updated_at,
        NEW.location, NEW.address, NEW.time_zone, NEW.opening_hours))
    EXECUTE FUNCTION live_cafe_changed();
