-- The rate limits for the whole service: how many requests of each limit every API process together
-- admitted from a client in each minute (`SharedRateCounts`). Unlogged: counts are worth nothing after
-- a crash or a failover (a standby has none), and they cost no WAL.
CREATE UNLOGGED TABLE rate_limit_counts (
    limit_name text   NOT NULL,
    client     text   NOT NULL,
    minute     bigint NOT NULL,
    count      integer NOT NULL,
    PRIMARY KEY (limit_name, client, minute)
);
