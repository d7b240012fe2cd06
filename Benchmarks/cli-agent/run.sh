#!/bin/bash
# Every entry point `credential-vault agent` serves (`token`, `git-credential get`, `kubectl-credential`,
# `docker-credential get`, and `fhir get`, whose FHIR request goes from the CLI to keyservice-mock's FHIR server)
# next to the floor (`credential-vault --version`: process start, argument parsing, no work) and next to
# `credential-vault token` without the agent (password on stdin: Argon2id, key service, token endpoint), all measured
# in one run against keyservice-mock children (one issuer login, one FHIR login in SMART mode, an agent each); then
# counts the token-endpoint requests that 100 sequential agent-backed calls of each cause while the access token is
# fresh, from keyservice-mock's debug request log.
# Usage: Benchmarks/cli-agent/run.sh [RUNS]   (`make bench-cli` runs it; release build; never part of `make test`)
# BIN_DIR=DIR measures the credential-vault and keyservice-mock in DIR instead of building (to compare two builds).
set -eu

RUNS=${1:-30}
SWIFT=${SWIFT:-swift}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
mock_pid=""
smart_pid=""
bin=""
cleanup() {
    if [ -n "$bin" ] && [ -x "$bin/credential-vault" ]; then
        "$bin/credential-vault" lock >/dev/null 2>&1 || true
        CREDENTIAL_VAULT_STORE="$work/fstore" CREDENTIAL_VAULT_FHIR="${fhir:-}" CREDENTIAL_VAULT_KEY_SERVICE="${keyservice:-}" \
            "$bin/credential-vault" lock >/dev/null 2>&1 || true
    fi
    for pid in $mock_pid $smart_pid; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

if [ -n "${BIN_DIR:-}" ]; then
    bin=$(cd "$BIN_DIR" && pwd)
else
    echo "building credential-vault and keyservice-mock (release)..."
    # The release build `make build-release` makes (CI runs it): only what changed since is compiled again.
    scratch=(--scratch-path "${RELEASE_SCRATCH:-.build-release}")
    (cd "$root" && "$SWIFT" build -c release "${scratch[@]}" --product credential-vault >/dev/null &&
        "$SWIFT" build -c release "${scratch[@]}" --product keyservice-mock >/dev/null)
    bin="$(cd "$root" && "$SWIFT" build -c release "${scratch[@]}" --show-bin-path)"
fi

mkdir -m 700 "$work/state" "$work/smart-state" "$work/home" "$work/run"
# Two keyservice-mock children: one plain issuer, one in SMART mode (its issuer takes SMART launches only).
"$bin/keyservice-mock" --port 0 --state-dir "$work/state" --log-level debug >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
"$bin/keyservice-mock" --port 0 --state-dir "$work/smart-state" --log-level debug --smart \
    >"$work/smart.out" 2>"$work/smart.err" &
smart_pid=$!
for _ in $(seq 1 100); do grep -q listening "$work/mock.out" "$work/smart.out" 2>/dev/null && break; sleep 0.1; done
for _ in $(seq 1 100); do grep -q listening "$work/smart.out" 2>/dev/null && break; sleep 0.1; done
base=$(sed -n 's/.*listening on \(http[^ ]*\) realm \(.*\)/\1\/auth\/realms\/\2/p' "$work/mock.out")
fhir=$(sed -n 's/.* fhir \(http[^ ]*\)$/\1/p' "$work/smart.out")
[ -n "$base" ] && [ -n "$fhir" ] || { echo "keyservice-mock did not start:"; cat "$work/mock.err" "$work/smart.err"; exit 1; }
keyservice=$(sed -n 's/.*listening on \(http[^ ]*\) realm \([^ ]*\).*/\1\/auth\/realms\/\2\/keyservice\/v1/p' "$work/smart.out")

export HOME="$work/home" XDG_DATA_HOME="$work/home/data" XDG_STATE_HOME="$work/home/state"
export XDG_CONFIG_HOME="$work/home/config" XDG_RUNTIME_DIR="$work/run" CREDENTIAL_VAULT_ISSUER="$base" CREDENTIAL_VAULT_STORE="$work/store"
password="correct horse"
echo "$password" > "$work/pw"
# The FHIR login (a SMART launch at keyservice-mock's FHIR server) lives in a store of its own, with an agent of its own.
fhir_env=(env CREDENTIAL_VAULT_STORE="$work/fstore" CREDENTIAL_VAULT_FHIR="$fhir" CREDENTIAL_VAULT_KEY_SERVICE="$keyservice")
for login in "" "${fhir_env[*]}"; do
    $login "$bin/credential-vault" register --unattended --password-stdin <"$work/pw" >/dev/null 2>"$work/register.err" \
        || { echo "register failed:"; cat "$work/register.err"; exit 1; }
    $login "$bin/credential-vault" agent --password-stdin <"$work/pw" >"$work/agent.out" 2>"$work/agent.err" \
        || { echo "credential-vault agent failed:"; cat "$work/agent.err"; exit 1; }
    cat "$work/agent.out"
done

token_requests() { cat "$work/mock.err" "$work/smart.err" | grep -c 'path=[^ ]*/protocol/openid-connect/token\b' || true; }

VAULT="$bin/credential-vault" PW="$work/pw" RUNS="$RUNS" WORK="$work" FHIR="$fhir" KEYSERVICE="$keyservice" python3 - <<'PY'
import os, statistics, subprocess, sys, time

vault, pw, runs, work = os.environ["VAULT"], os.environ["PW"], int(os.environ["RUNS"]), os.environ["WORK"]
fhir_env = dict(os.environ, CREDENTIAL_VAULT_STORE=f"{work}/fstore", CREDENTIAL_VAULT_FHIR=os.environ["FHIR"],
                CREDENTIAL_VAULT_KEY_SERVICE=os.environ["KEYSERVICE"])
git_input = b"protocol=https\nhost=git.example\n\n"
docker_input = b"https://registry.example\n"

# (label, arguments, standard input, environment): every agent-served entry point, as its caller runs it.
served = [
    ("credential-vault token", ["token"], b"", None),
    ("git-credential get", ["git-credential", "get"], git_input, None),
    ("kubectl-credential", ["kubectl-credential"], b"", None),
    ("docker-credential get", ["docker-credential", "get"], docker_input, None),
    ("fhir get's token part (token, FHIR login)", ["token"], b"", fhir_env),
]
whole_fhir = ("fhir get Patient/p1 (+ one loopback GET)", ["fhir", "get", "Patient/p1"], b"", fhir_env)
floor_row = ("credential-vault --version (the floor)", ["--version"], b"", None)

def once(row):
    label, arguments, stdin, env = row
    start = time.perf_counter()
    done = subprocess.run([vault] + arguments, input=stdin, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0 or not done.stdout:
        sys.exit(f"credential-vault {' '.join(arguments)} failed ({done.returncode}): {done.stderr.decode()}")
    return elapsed

rows = [floor_row] + served + [whole_fhir]
for row in rows:
    once(row)
# Rounds are interleaved (each command once per round, in turn), so a change in the machine's load falls on every
# row alike; each command had its warm-up run above.
times = {row[0]: [] for row in rows}
for _ in range(runs):
    for row in rows:
        times[row[0]].append(once(row))
# Each run without the agent costs an Argon2id derivation and two round trips: fewer runs keep the benchmark short.
direct_runs = max(5, runs // 3)
direct = []
for _ in range(direct_runs):
    start = time.perf_counter()
    with open(pw, "rb") as stdin:
        done = subprocess.run([vault, "token", "--no-agent", "--password-stdin"], stdin=stdin,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    direct.append((time.perf_counter() - start) * 1000)
    if done.returncode != 0:
        sys.exit(f"credential-vault token --no-agent failed ({done.returncode}): {done.stderr.decode()}")

floor = statistics.median(times[floor_row[0]])
print()
print(f"median of {runs} interleaved runs each (token --no-agent: {direct_runs} runs), release build")
print(f"{floor_row[0]:<52}{floor:8.1f} ms   1.00x")
for label, *_ in served:
    median = statistics.median(times[label])
    print(f"{label + ', agent':<52}{median:8.1f} ms {median / floor:6.2f}x   (goal: within 1.25x)")
median = statistics.median(times[whole_fhir[0]])
print(f"{whole_fhir[0] + ', agent':<52}{median:8.1f} ms {median / floor:6.2f}x   (token part above; the GET is not)")
median = statistics.median(direct)
print(f"{'credential-vault token --no-agent (stdin)':<52}{median:8.1f} ms {median / floor:6.2f}x")
PY

# Register, each agent's unlock and the --no-agent runs each reached the token endpoint: a log without them would
# make the counts below meaningless.
[ "$(token_requests)" -gt 0 ] || { echo "keyservice-mock's request log shows no token request: cannot count"; exit 1; }
count() {
    local label=$1 input=$2
    shift 2
    local before after
    before=$(token_requests)
    for _ in $(seq 1 100); do printf '%b' "$input" | "$@" >/dev/null; done
    after=$(token_requests)
    echo "token-endpoint requests during 100 sequential agent-backed $label calls: $((after - before)) (goal 0)"
}
count "\`credential-vault token\`" "" "$bin/credential-vault" token
count "\`git-credential get\`" 'protocol=https\nhost=git.example\n\n' "$bin/credential-vault" git-credential get
count "\`kubectl-credential\`" "" "$bin/credential-vault" kubectl-credential
count "\`docker-credential get\`" 'https://registry.example\n' "$bin/credential-vault" docker-credential get
count "\`fhir get Patient/p1\`" "" "${fhir_env[@]}" "$bin/credential-vault" fhir get Patient/p1
