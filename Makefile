# CafeReview — the two commands a newcomer needs:
#   make run    install what is missing, build (release), serve on http://127.0.0.1:8080 with an embedded database
#   make test   install what is missing, run the whole test suite (real PostgreSQL, real sockets)

SWIFT    ?= swift
APT_DEPS := libpq-dev libmicrohttpd-dev libsodium-dev postgresql pkg-config
export PATH := $(PATH):/opt/swift/usr/bin

.PHONY: run test deps build release clean

run: deps release
	.build/release/cafe serve --seed-demo

# The suite is XCTest only; without Swift Testing the run ends on XCTest's own count of tests.
test: deps
	$(SWIFT) test --disable-swift-testing

build: deps
	$(SWIFT) build

release:
	$(SWIFT) build -c release --product cafe

# Installs the Debian packages the build and the embedded database need. As root it installs them;
# otherwise it prints the exact command and stops, so nothing is half-done.
deps:
	@command -v $(SWIFT) >/dev/null 2>&1 || { echo "The Swift 6 toolchain is not on PATH (see https://www.swift.org/install/linux/)."; exit 1; }
	@missing=""; \
	for p in $(APT_DEPS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = "0" ]; then \
	    echo "Installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	  else \
	    echo "Missing Debian packages:$$missing"; \
	    echo "Install them with:"; \
	    echo "  sudo apt-get install -y$$missing"; \
	    exit 1; \
	  fi; \
	fi

clean:
	rm -rf .build
