# Build: the Swift toolchain image plus the Debian -dev packages the system-library targets need.
FROM swift:6.1-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libpq-dev libmicrohttpd-dev libwslay-dev libsodium-dev libcrypt-dev libicu-dev libvips-dev libcurl4-openssl-dev zlib1g-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
RUN swift build -c release --static-swift-stdlib --product cafe

# Run: only the shared libraries, the binary, the migrations, the web client and the API description.
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libpq5 libmicrohttpd12 libwslay1 libsodium23 libicu72 libvips42 libcurl4 zlib1g ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home /app cafe
COPY --from=build /src/.build/release/cafe /usr/local/bin/cafe
COPY migrations /app/migrations
COPY web /app/web
COPY openapi /app/openapi
ENV MIGRATIONS_DIR=/app/migrations WEB_DIR=/app/web OPENAPI_FILE=/app/openapi/openapi.json HOST=0.0.0.0 PORT=8080
USER cafe
WORKDIR /app
EXPOSE 8080
ENTRYPOINT ["cafe"]
CMD ["serve"]
