#!/bin/sh
# Run once by the postgres image when it initialises `db`: lets the standby stream from it.
echo "host replication cafe all scram-sha-256" >> "$PGDATA/pg_hba.conf"
