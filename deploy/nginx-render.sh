#!/bin/sh
# Prints the load balancer's configuration: deploy/nginx.conf with its body limit derived from the
# service's (MAX_BODY_BYTES, else PHOTO_MAX_BYTES + 64 KiB, as `cafe serve` works it out) plus 1 MiB.
# docker-compose.yml's `lb` runs it with `--run` (then nginx); tools/cluster.sh renders `make cluster`'s
# balancer with it, replacing the lines marked `# cluster:` from LB_LISTEN (host:port), LB_UPSTREAMS
# (host:port …) and LB_DIR (the pid, error log and temporary files).
set -eu
here=$(dirname "$0")
photo=${PHOTO_MAX_BYTES:-26214400}
body=${MAX_BODY_BYTES:-$((photo + 65536))}
limit=$((body + 1048576))
render() {
    if [ -z "${LB_LISTEN:-}" ]; then
        sed -e "s|client_max_body_size [0-9a-z]*;|client_max_body_size $limit;|" "$here/nginx.conf"
        return
    fi
    servers=""
    for upstream in ${LB_UPSTREAMS:?LB_UPSTREAMS names the API processes}; do
        servers="$servers        server $upstream max_fails=1 fail_timeout=2s;\\n"
    done
    dir=${LB_DIR:?LB_DIR holds the pid, log and temporary files}
    sed -e "s|client_max_body_size [0-9a-z]*;|client_max_body_size $limit;|" \
        -e "s|^events |pid $dir/nginx.pid;\\nerror_log $dir/lb-error.log warn;\\nevents |" \
        -e "s|^ *resolver .*# cluster:.*|    client_body_temp_path $dir/lb-body;\\n    proxy_temp_path $dir/lb-proxy;|" \
        -e "s|^ *server .*# cluster:.*|$servers|" \
        -e "s|^ *listen .*# cluster:.*|        listen $LB_LISTEN;|" "$here/nginx.conf"
}
if [ "${1:-}" = --run ]; then
    render > /etc/nginx/nginx.conf
    exec nginx -g 'daemon off;'
fi
render
