#!/bin/sh
# Measures POST /key (right secret) of keyservice on SQLite, of keyservice on PostgreSQL with 1 instance and with 2 and 4
# behind nginx (postgres.sh), and of keyservice-mock, against a plain Hummingbird JSON echo route, with the same load
# generator (wrk), on the same machine, in one run.
# Usage: Benchmarks/keyservice-throughput/run.sh   (from anywhere; `make bench-keyservice` runs it)
set -eu

SWIFT=${SWIFT:-swift}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-50}
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-2}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
cleanup() {
    for pidfile in "$work"/*.pid; do
        [ -f "$pidfile" ] || continue
        pid=$(cat "$pidfile")
        # PostgreSQL's fast shutdown is SIGINT (its SIGTERM waits for every client to leave).
        case "$pidfile" in */postgres.pid) kill -INT "$pid" 2>/dev/null || true ;; *) kill "$pid" 2>/dev/null || true ;; esac
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    done
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }

echo "building keyservice, keyservice-mock and echo-server (release)..."
# The release builds `make build-release` makes (CI runs it): only what changed since is compiled again.
release="--scratch-path ${RELEASE_SCRATCH:-.build-release}"
benchmarks="--package-path Benchmarks --scratch-path ${BENCHMARK_SCRATCH:-.build-benchmarks}"
(cd "$root" && "$SWIFT" build -c release $release --product keyservice-mock >/dev/null)
(cd "$root" && "$SWIFT" build -c release $release --product keyservice >/dev/null)
(cd "$root" && "$SWIFT" build -c release $benchmarks --product echo-server >/dev/null)
mock_bin="$(cd "$root" && "$SWIFT" build -c release $release --show-bin-path)/keyservice-mock"
service_bin="$(cd "$root" && "$SWIFT" build -c release $release --show-bin-path)/keyservice"
keyservice_bin=$service_bin
echo_bin="$(cd "$root" && "$SWIFT" build -c release $benchmarks --show-bin-path)/echo-server"

# Starts a server and prints the URL of its ready line. It runs inside $(...), a subshell, so the
# server's pid goes to a file for cleanup to find.
start() {
    out="$work/$1.out"
    name=$1
    shift
    "$@" >"$out" &
    echo $! >"$work/$name.pid"
    for _ in $(seq 1 100); do
        url=$(grep -o 'http://[0-9.:]*' "$out" 2>/dev/null | head -n 1 || true)
        if [ -n "$url" ]; then echo "$url"; return 0; fi
        sleep 0.1
    done
    echo "$name did not start" >&2
    exit 1
}

mock_url=$(start mock "$mock_bin" --state-dir "$work/state")
service_url=$(start service "$service_bin" --listen 127.0.0.1:0 --log-level warning \
    --database "sqlite:$work/service.sqlite" --secrets-dir "$work/secrets")
echo_url=$(start echo "$echo_bin")
key_base="$mock_url/auth/realms/demo/keyservice/v1"
service_base="$service_url/keyservice/v1"

secret="bench-secret-0123456789abcdefghijklmnopqrstuvwxyz"
# Creates a key below $1, checks that the right secret opens it, and writes wrk's script $2 that asks for it.
prepare() {
    keyid=$(curl -sf -X POST -H 'Content-Type: application/json' -d "{\"secret\":\"$secret\"}" "$1/createkey" |
        sed 's/.*"keyid":"\([^"]*\)".*/\1/')
    body="{\"keyid\":\"$keyid\",\"secret\":\"$secret\"}"
    status=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d "$body" "$1/key")
    [ "$status" = 200 ] || { echo "POST $1/key answered $status, not 200" >&2; exit 1; }
    cat >"$2" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
LUA
}
prepare "$key_base" "$work/post.lua"
prepare "$service_base" "$work/service.lua"

# Runs wrk (script $3, default post.lua) and prints requests per second; fails when any answer was not 2xx.
measure() {
    out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$2" -s "${3:-$work/post.lua}" "$1")
    if echo "$out" | grep -q "Non-2xx"; then
        echo "$out" >&2
        echo "$1 answered errors under load" >&2
        exit 1
    fi
    echo "$out" | awk '/Requests\/sec/ { printf "%.0f", $2 }'
}

# The PostgreSQL rows (issue 22): see postgres.sh.
. "$here/postgres.sh"
start_postgres_rows

echo "warming up..."
measure "$echo_url/echo" 3s >/dev/null
measure "$key_base/key" 3s >/dev/null
measure "$service_base/key" 3s "$work/service.lua" >/dev/null
for url in "$pg1_url" "$pg2_url" "$pg4_url"; do measure "$url/key" 3s "$work/pg.lua" >/dev/null; done

# Interleaved rounds, best of each: load from other processes on the machine hits both alike.
best_echo=0
best_key=0
best_service=0
best_pg1=0
best_pg2=0
best_pg4=0
round=1
while [ "$round" -le "$ROUNDS" ]; do
    e=$(measure "$echo_url/echo" "$DURATION")
    s=$(measure "$service_base/key" "$DURATION" "$work/service.lua")
    k=$(measure "$key_base/key" "$DURATION")
    p1=$(measure "$pg1_url/key" "$DURATION" "$work/pg.lua")
    p2=$(measure "$pg2_url/key" "$DURATION" "$work/pg.lua")
    p4=$(measure "$pg4_url/key" "$DURATION" "$work/pg.lua")
    echo "round $round: keyservice /key $s requests/s, keyservice-mock /key $k requests/s, echo $e requests/s," \
        "PostgreSQL 1/2/4 instances $p1/$p2/$p4 requests/s"
    [ "$e" -gt "$best_echo" ] && best_echo=$e
    [ "$s" -gt "$best_service" ] && best_service=$s
    [ "$k" -gt "$best_key" ] && best_key=$k
    [ "$p1" -gt "$best_pg1" ] && best_pg1=$p1
    [ "$p2" -gt "$best_pg2" ] && best_pg2=$p2
    [ "$p4" -gt "$best_pg4" ] && best_pg4=$p4
    round=$((round + 1))
done

echo
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $(nproc) cores, best of $ROUNDS rounds"
printf '%-44s %8s requests/s\n' "keyservice POST /key (SQLite, 1 instance)" "$best_service"
printf '%-44s %8s requests/s\n' "keyservice-mock POST /key (SQLite state)" "$best_key"
printf '%-44s %8s requests/s\n' "keyservice POST /key, PostgreSQL, 1 instance" "$best_pg1"
printf '%-44s %8s requests/s\n' "keyservice POST /key, PostgreSQL, 2 + nginx" "$best_pg2"
printf '%-44s %8s requests/s\n' "keyservice POST /key, PostgreSQL, 4 + nginx" "$best_pg4"
echo "(PostgreSQL rows: ${PG_KEYS:-64} keys in turn, one private server on this machine, synchronous_commit on)"
printf '%-44s %8s requests/s\n' "plain Hummingbird JSON echo" "$best_echo"
awk -v k="$best_service" -v e="$best_echo" \
    'BEGIN { printf "ratio keyservice /key : echo = %.1f%% (goal: at least 50%%)\n", 100 * k / e }'
awk -v k="$best_key" -v e="$best_echo" \
    'BEGIN { printf "ratio keyservice-mock /key : echo = %.1f%%\n", 100 * k / e }'
