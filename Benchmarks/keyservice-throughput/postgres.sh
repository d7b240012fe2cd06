# Sourced by run.sh: the PostgreSQL rows of `make bench-keyservice` (issue 22). A private PostgreSQL from Debian's
# package in $work/pg (initdb and the server run as the postgres user when this runs as root: PostgreSQL refuses
# root), four `keyservice` instances on it, and nginx from the operator page's sample configuration
# (KeyService/nginx/keyservice.conf) in front of two and of four of them. Everything is stopped by PID in cleanup.

pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$pg_bin" ] || { echo "PostgreSQL is missing: apt-get install -y postgresql (make deps installs it)" >&2; exit 1; }
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "nginx is missing: apt-get install -y nginx" >&2; exit 1; }
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

as_postgres() {
    if [ "$(id -u)" = 0 ]; then
        setpriv --reuid=postgres --regid=postgres --clear-groups -- env -i PATH=/usr/bin:/bin LC_ALL=C "$@"
    else
        "$@"
    fi
}

# A port that was free a moment ago.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts the private PostgreSQL; sets pg_url.
start_postgres() {
    mkdir -p "$work/pg"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$work/pg" && chmod 755 "$work"
    as_postgres "$pg_bin/initdb" -D "$work/pg/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
        --no-locale -E UTF8 --no-instructions >"$work/pg-init.log" 2>&1 ||
        { cat "$work/pg-init.log" >&2; exit 1; }
    pg_port=$(free_port)
    as_postgres "$pg_bin/postgres" -D "$work/pg/data" -p "$pg_port" -c listen_addresses=127.0.0.1 \
        -c unix_socket_directories="$work/pg" -c max_connections=200 >"$work/pg.log" 2>&1 &
    echo $! >"$work/postgres.pid"
    for _ in $(seq 1 300); do
        "$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$pg_port" && break
        sleep 0.1
    done
    pg_password=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
    as_postgres "$pg_bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$work/pg" -p "$pg_port" -U postgres -d postgres \
        -c "CREATE ROLE keyservice LOGIN PASSWORD '$pg_password'" -c "CREATE DATABASE keyservice OWNER keyservice" ||
        { cat "$work/pg.log" >&2; exit 1; }
    pg_url="postgres://keyservice:$pg_password@127.0.0.1:$pg_port/keyservice?sslmode=disable"
}

# Starts nginx in front of the instances at the given ports; prints its URL. Its pid file is $work/$1.pid.
start_nginx() {
    name=$1
    shift
    dir="$work/$name"
    mkdir -p "$dir"
    chmod 755 "$dir"
    port=$(free_port)
    servers=""
    for upstream in "$@"; do servers="$servers server 127.0.0.1:$upstream;"; done
    sed -e "s#@LISTEN@#127.0.0.1:$port#" -e "s#@SERVERS@#$servers#" -e "s#@RUNTIME@#$dir#g" -e "s#@LOGS@#$dir#g" \
        "$root/KeyService/nginx/keyservice.conf" >"$dir/nginx.conf"
    "$nginx_bin" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" \
        -g "daemon off; pid $dir/nginx.pid; error_log $dir/error.log;" >"$dir/nginx.out" 2>&1 &
    echo $! >"$work/$name.pid"
    for _ in $(seq 1 100); do
        curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && { echo "http://127.0.0.1:$port"; return 0; }
        sleep 0.1
    done
    cat "$dir/error.log" >&2
    exit 1
}

# Writes $work/$1.lua: POSTs to /key cycling over $2 keys made through $3 (a key-service base URL), right secret.
write_key_script() {
    {
        echo 'wrk.method = "POST"'
        echo 'wrk.headers["Content-Type"] = "application/json"'
        echo 'bodies = {}'
        i=1
        while [ "$i" -le "$2" ]; do
            id=$(curl -sf -X POST -H 'Content-Type: application/json' -d "{\"secret\":\"$secret\"}" "$3/createkey" |
                sed 's/.*"keyid":"\([^"]*\)".*/\1/')
            [ -n "$id" ] || { echo "createkey through $3 failed" >&2; exit 1; }
            echo "bodies[$i] = '{\"keyid\":\"$id\",\"secret\":\"$secret\"}'"
            i=$((i + 1))
        done
        echo 'counter = 0'
        echo 'request = function()'
        echo '    counter = counter + 1'
        echo '    return wrk.format(nil, nil, nil, bodies[(counter % #bodies) + 1])'
        echo 'end'
    } >"$work/$1.lua"
}

# Starts the PostgreSQL rows' servers: the database, four keyservice instances, nginx before two and before four.
# Sets pg1_url, pg2_url, pg4_url (key-service base URLs) and writes pg.lua.
start_postgres_rows() {
    start_postgres
    # Every instance on one database gets the same secrets.
    KEYSERVICE_PEPPER_1=$(head -c 32 /dev/urandom | base64)
    KEYSERVICE_SIGNING_SEED=$(head -c 32 /dev/urandom | base64)
    export KEYSERVICE_PEPPER_1 KEYSERVICE_SIGNING_SEED
    ports=""
    for n in 1 2 3 4; do
        url=$(start "pgks$n" "$keyservice_bin" serve \
            --database "$pg_url" --listen 127.0.0.1:0 --client-address-header X-Real-IP --log-level warning)
        [ "$n" = 1 ] && pg1_url="$url/keyservice/v1"
        ports="$ports ${url##*:}"
    done
    set -- $ports
    pg2_url="$(start_nginx nginx2 "$1" "$2")/keyservice/v1"
    pg4_url="$(start_nginx nginx4 "$1" "$2" "$3" "$4")/keyservice/v1"
    write_key_script pg "${PG_KEYS:-64}" "$pg1_url"
}
