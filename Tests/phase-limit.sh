#!/usr/bin/env bash
# Tests/phase-limit.sh NAME SECONDS COMMAND...: runs one phase of `make test` under a time limit, so that a hang
# (a test process whose children hold its output pipe, a deadlock) fails the run with a line naming the phase
# instead of holding CI until its own limit.
#
# coreutils timeout runs the phase in a process group of its own and, at the limit, sends SIGTERM to that whole
# group, then SIGKILL 30 s later to whatever is left (swift test, the test binary, and every process of theirs that
# stayed in the group). Children the tests start in groups of their own (VaultTestSupport's TestProcess) never hold
# the phase's output and stop when the test process is gone. Because the group is not the terminal's, a Ctrl-C or
# a TERM sent to this script is passed on to it.
#
# When MAKE_TEST_TIMES names a file, one line with the phase's wall time and outcome is added to it (make test prints
# the file at the end).
set -u
name=$1
limit=$2
shift 2
started=$(date +%s)

timeout --kill-after=30 "$limit" "$@" &
pid=$!
interrupted=""
trap 'interrupted=INT; kill -s INT "$pid" 2>/dev/null' INT
trap 'interrupted=TERM; kill -s TERM "$pid" 2>/dev/null' TERM
# A trapped signal ends `wait` early: wait again until timeout itself has ended.
while true; do
    wait "$pid"
    status=$?
    kill -0 "$pid" 2>/dev/null || break
done
outcome=passed
if [ -n "$interrupted" ]; then
    echo "make test: the $name phase was stopped by SIG$interrupted" >&2
    outcome="stopped by SIG$interrupted"
elif [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "make test: the $name phase did not finish within $limit s and was stopped: a hang (exit $status)" >&2
    outcome="stopped at its limit of $limit s (exit $status)"
elif [ "$status" -ne 0 ]; then
    outcome="failed (exit $status)"
fi
if [ -n "${MAKE_TEST_TIMES:-}" ]; then
    elapsed=$(($(date +%s) - started))
    printf 'make test: phase %-20s %5d s  (%dm%02ds)  %s\n' "$name" "$elapsed" $((elapsed / 60)) $((elapsed % 60)) \
        "$outcome" >>"$MAKE_TEST_TIMES"
fi
exit "$status"
