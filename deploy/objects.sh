#!/bin/sh
# docker-compose's optional `objects` service (profile s3): SeaweedFS's S3 API on :8333 with the
# SigV4 credentials the api and worker use (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).
set -eu
: "${AWS_SECRET_ACCESS_KEY:?set AWS_SECRET_ACCESS_KEY, the object store's secret key, to use the s3 profile}"
printf '{"identities":[{"name":"cafe","credentials":[{"accessKey":"%s","secretKey":"%s"}],"actions":["Admin","Read","Write","List"]}]}' \
    "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" > /tmp/s3.json
exec weed server -dir=/data -s3 -s3.port=8333 -s3.config=/tmp/s3.json -master.telemetry=false
