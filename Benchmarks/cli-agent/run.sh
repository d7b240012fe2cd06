#!/bin/bash
# `credential-vault token` served by `credential-vault agent` next to the floor (`credential-vault --version`: process start, argument parsing, no
# work) and next to `credential-vault token` without the agent (password on stdin: Argon2id, key service, token endpoint), all
# measured in one run against a keyservice-mock child; then counts the token-endpoint requests that 100 sequential
# agent-backed `credential-vault token` calls cause while the access token is fresh, from keyservice-mock's debug request log.
# Usage: Benchmarks/cli-agent/run.sh [RUNS]   (`make bench-cli` runs it; release build; never part of `make test`)
set -eu

RUNS=${1:-30}
SWIFT=${SWIFT:-swift}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
mock_pid=""
bin=""
cleanup() {
    if [ -n "$bin" ] && [ -x "$bin/credential-vault" ]; then "$bin/credential-vault" lock >/dev/null 2>&1 || true; fi
    if [ -n "$mock_pid" ]; then kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

echo "building credential-vault and keyservice-mock (release)..."
# The release build `make build-release` makes (CI runs it): only what changed since is compiled again.
scratch=(--scratch-path "${RELEASE_SCRATCH:-.build-release}")
(cd "$root" && "$SWIFT" build -c release "${scratch[@]}" --product credential-vault >/dev/null &&
    "$SWIFT" build -c release "${scratch[@]}" --product keyservice-mock >/dev/null)
bin="$(cd "$root" && "$SWIFT" build -c release "${scratch[@]}" --show-bin-path)"

mkdir -m 700 "$work/state" "$work/home" "$work/run"
"$bin/keyservice-mock" --port 0 --state-dir "$work/state" --log-level debug >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
for _ in $(seq 1 100); do grep -q listening "$work/mock.out" 2>/dev/null && break; sleep 0.1; done
base=$(sed -n 's/.*listening on \(http[^ ]*\) realm \(.*\)/\1\/auth\/realms\/\2/p' "$work/mock.out")
[ -n "$base" ] || { echo "keyservice-mock did not start:"; cat "$work/mock.err"; exit 1; }

export HOME="$work/home" XDG_DATA_HOME="$work/home/data" XDG_STATE_HOME="$work/home/state"
export XDG_CONFIG_HOME="$work/home/config" XDG_RUNTIME_DIR="$work/run" CREDENTIAL_VAULT_ISSUER="$base" CREDENTIAL_VAULT_STORE="$work/store"
password="correct horse"
echo "$password" > "$work/pw"
"$bin/credential-vault" register --unattended --password-stdin <"$work/pw" >/dev/null 2>"$work/register.err" \
    || { echo "register failed:"; cat "$work/register.err"; exit 1; }
"$bin/credential-vault" agent --password-stdin <"$work/pw" >"$work/agent.out" 2>"$work/agent.err" \
    || { echo "credential-vault agent failed:"; cat "$work/agent.err"; exit 1; }
echo "$(cat "$work/agent.out")"

token_requests() { grep -c 'path=[^ ]*/protocol/openid-connect/token\b' "$work/mock.err" || true; }

VAULT="$bin/credential-vault" PW="$work/pw" RUNS="$RUNS" python3 - <<'PY'
import os, statistics, subprocess, sys, time

vault, pw, runs = os.environ["VAULT"], os.environ["PW"], int(os.environ["RUNS"])

def median_ms(arguments, stdin_path=None, count=runs):
    times = []
    for _ in range(count):
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        start = time.perf_counter()
        done = subprocess.run([vault] + arguments, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append((time.perf_counter() - start) * 1000)
        if stdin_path:
            stdin.close()
        if done.returncode != 0:
            sys.exit(f"credential-vault {' '.join(arguments)} failed ({done.returncode}): {done.stderr.decode()}")
    return statistics.median(times)

# Interleaved rounds would mix caches; each command gets its warm-up run first instead.
for arguments, stdin in ((["--version"], None), (["token"], None), (["token", "--no-agent", "--password-stdin"], pw)):
    median_ms(arguments, stdin, count=2)
floor = median_ms(["--version"])
agent = median_ms(["token"])
# Each run without the agent costs an Argon2id derivation and two round trips: fewer runs keep the benchmark short.
direct = median_ms(["token", "--no-agent", "--password-stdin"], pw, count=max(5, runs // 3))
print()
print(f"median of {runs} runs each (credential-vault token --no-agent: {max(5, runs // 3)} runs), release build")
print(f"{'credential-vault --version (the floor)':<44}{floor:8.1f} ms   1.00x")
print(f"{'credential-vault token, served by the agent':<44}{agent:8.1f} ms {agent / floor:6.2f}x   (goal: within 1.5x)")
print(f"{'credential-vault token --no-agent (stdin)':<44}{direct:8.1f} ms {direct / floor:6.2f}x")
PY

before=$(token_requests)
# Register, the agent's unlock and the --no-agent runs each reached the token endpoint: a log without them would
# make the count below meaningless.
[ "$before" -gt 0 ] || { echo "keyservice-mock's request log shows no token request: cannot count"; exit 1; }
for _ in $(seq 1 100); do "$bin/credential-vault" token >/dev/null </dev/null; done
after=$(token_requests)
echo "token-endpoint requests during 100 sequential agent-backed \`credential-vault token\` calls: $((after - before)) (goal 0)"
