#!/usr/bin/env bash
# make proof-races: the concurrency suites built with ThreadSanitizer (in .build-tsan, beside the normal build) and run
# with every report fatal; prints one PROOF line and fails on any race or failed test.
# make proof-races-planted (`planted` as the first argument): runs the planted data race of PlantedRaceTests and
# passes only when ThreadSanitizer reports it, so the proof is shown able to fail.
set -uo pipefail
cd "$(dirname "$0")/../.."
SWIFT=${SWIFT:-swift}
SANITIZED=(--sanitize=thread --scratch-path .build-tsan)

# The suites the issue names, tagged `races` in their files, each run in its own tier of make test (Tests/tiers.py).
# Fast, in parallel: two vaults on one store in one process (AuthSharingTests). CLI: two credential-vault processes
# logging in at once on one store (ConcurrentProcessTests). Alone, one test at a time: single flight with 1,000
# callers and logout during a refresh (AuthTests), 200 and 1,000 simultaneous wrong secrets at an in-process key
# service (LockoutTests), and as many simultaneous protocol v2 evaluations (KeyServiceV2LockoutTests: the count, the
# evaluation and the nonce). Not ExecutableTests/lockSurvivesKill: a race that ends the test process while its
# keyservice-mock child runs leaves that child holding swift test's output pipe, and the run hangs instead of failing.

# halt_on_error: the first report ends its process with status 66, so no race can pass unnoticed. log_path: every
# process writes its reports to a file of its own here, the test process and the binaries it starts alike (whose
# standard error a test may not show), and the races are counted there. The suppressions file names only frames of
# dependencies, each with the reason it is not ours.
reports=$(mktemp -d)
trap 'rm -rf "$reports"' EXIT
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:log_path=$reports/report:suppressions=$PWD/Tests/Races/tsan-suppressions.txt"

# The reports written so far, printed, and their count.
count_reports() {
    cat "$reports"/report.* 2>/dev/null >&2
    cat "$reports"/report.* 2>/dev/null | grep -c 'WARNING: ThreadSanitizer:'
}

# make test starts the ThreadSanitizer build in the background (`prebuild`) as soon as the debug build is done, at the
# lowest CPU priority, so it takes the cores mostly while the tiers wait (on their children, their servers, their
# kills), and it is mostly done when this proof starts. swift-build starts its compilers at nice 0 whatever its own
# nice value, so `prebuild-run` lowers each one as it appears (every second, the whole tree of the build). The build
# keeps make's session (`set -m` gives it a process group, not a session of its own: on Linux a new session is a
# scheduler autogroup, which takes half the CPU whatever its nice value). `prebuild-stop` ends the tree when the run
# fails or is interrupted before this proof.
PREBUILD=.build/tsan-prebuild

# The processes under `$1` (children, theirs, ...), one a line.
descendants() {
    ps -eo pid=,ppid= | awk -v root="$1" '{ parent[$1] = $2 }
        END { for (p in parent) { q = p; while ((q in parent) && q != root && q > 1) q = parent[q]; if (q == root && p != root) print p } }'
}

case "${1:-}" in
prebuild)
    mkdir -p .build
    rm -f "$PREBUILD".status
    set -m
    "$0" prebuild-run </dev/null >/dev/null 2>&1 &
    echo $! >"$PREBUILD".pid
    echo "proof-races: the ThreadSanitizer build started in the background (log: $PREBUILD.log)"
    exit 0
    ;;
prebuild-run)
    started=$(date +%s)
    nice -n 19 "$SWIFT" build --build-tests "${SANITIZED[@]}" >"$PREBUILD".log 2>&1 &
    build=$!
    while kill -0 "$build" 2>/dev/null; do
        for process in $(descendants $$); do renice -n 19 -p "$process" >/dev/null 2>&1; done
        sleep 1
    done
    wait "$build"
    echo "$? $(($(date +%s) - started))" >"$PREBUILD".status
    exit 0
    ;;
prebuild-stop)
    if [ -f "$PREBUILD".pid ] && [ ! -f "$PREBUILD".status ]; then
        runner=$(cat "$PREBUILD".pid)
        # The runner first, so that it starts nothing more; then everything under it, in any process group.
        tree=$(descendants "$runner")
        kill -TERM "$runner" $tree 2>/dev/null
    fi
    rm -f "$PREBUILD".pid
    exit 0
    ;;
esac

# The background build, awaited; then the build below has nothing left to do (or, when there was none or it failed,
# does it all, its errors on the screen).
if [ -f "$PREBUILD".pid ]; then
    waited=$(date +%s)
    while [ ! -f "$PREBUILD".status ] && kill -0 "$(cat "$PREBUILD".pid)" 2>/dev/null; do sleep 2; done
    rm -f "$PREBUILD".pid
    if [ -f "$PREBUILD".status ]; then
        read -r prebuilt seconds <"$PREBUILD".status
        echo "proof-races: the background ThreadSanitizer build took $seconds s beside the tiers (exit $prebuilt);" \
            "this proof waited $(($(date +%s) - waited)) s for it"
    fi
fi
built=$(date +%s)
$SWIFT build --build-tests "${SANITIZED[@]}" || exit 1
echo "proof-races: the ThreadSanitizer build took $(($(date +%s) - built)) s"

if [ "${1:-}" = planted ]; then
    CREDENTIAL_VAULT_PLANTED_RACE=1 $SWIFT test --skip-build "${SANITIZED[@]}" --filter 'PlantedRaceTests' \
        >"$reports/output" 2>&1
    status=$?
    # Swift code's unguarded access is reported as a "Swift access race", C's as a "data race".
    if [ $status -ne 0 ] && cat "$reports"/report.* 2>/dev/null \
        | grep -qE 'SUMMARY: ThreadSanitizer: (Swift access race|data race) .*PlantedRaceTests.swift'; then
        echo "proof-races-planted: ThreadSanitizer reported the planted data race (PlantedRaceTests, exit $status):" \
            "the races proof fails on a race"
        exit 0
    fi
    cat "$reports/output"
    count_reports >/dev/null
    echo "proof-races-planted: FAILED: ThreadSanitizer did not report the planted data race (exit $status)"
    exit 1
fi

# One tier's races suites: its output goes to the screen; a phase that fails, or that runs no test (no suite of the
# tier tagged `races` any more), fails the proof.
status=0
tests=0
suites=0
phase() {
    local tier=$1
    shift
    SWIFT=$SWIFT Tests/tiers.py run "$tier" --races "${SANITIZED[@]}" "$@" 2>&1 | tee "$reports/output"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    # Swift Testing ends each run with "Test run with N tests in M suites passed|failed ...".
    local ran
    ran=$(grep -oE 'Test run with [0-9]+ tests? in [0-9]+ suites? (passed|failed)' "$reports/output" | tail -1)
    if [ -z "$ran" ] || [ "$(echo "$ran" | awk '{ print $4 }')" -eq 0 ]; then
        echo "make proof-races: no test ran in the $tier tier"
        status=1
        return
    fi
    tests=$((tests + $(echo "$ran" | awk '{ print $4 }')))
    suites=$((suites + $(echo "$ran" | awk '{ print $7 }')))
}

phase fast
phase cli
phase alone --no-parallel

races=$(count_reports)
echo "PROOF races: $tests tests in $suites suites under ThreadSanitizer, $races races"
if [ $status -ne 0 ] || [ "$races" -ne 0 ]; then
    echo "make proof-races: FAILED (a test failed, none ran, or ThreadSanitizer reported a race; see above)"
    exit 1
fi
