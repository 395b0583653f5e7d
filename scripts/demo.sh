#!/usr/bin/env bash
# resplock demo: builds the command-line tool, starts a throwaway redis-server on 127.0.0.1 and
# shows several workers taking turns through one lock, then the single commands one by one.
#
#   ./scripts/demo.sh
#
# On a fresh Debian or Ubuntu machine it first installs what is missing (g++, cmake, make,
# redis-server, redis-tools) with scripts/install-deps.sh, as root or through sudo. Exits 0 when
# every step behaved as expected, non-zero otherwise.
set -euo pipefail

WORKERS=4
ROUNDS=3
HOLD_SECONDS=0.3
KEY=demo:nightly-job

cd "$(dirname "$0")/.."
ROOT=$(pwd)

say() { printf '\n== %s\n' "$*"; }
fail() {
    printf 'demo: %s\n' "$*" >&2
    exit 1
}

# --- 1. tools -----------------------------------------------------------------------------------
say "Checking for a compiler, cmake, make and Redis (installing what is missing)"
./scripts/install-deps.sh demo || fail "could not install the tools (see above)"

# --- 2. build -----------------------------------------------------------------------------------
say "Building the resplock tool"
if [ -f Makefile ]; then
    make -j2
    RESPLOCK=$ROOT/build/resplock
else
    cmake -S . -B build/cmake -DCMAKE_BUILD_TYPE=Release -DRESPLOCK_BUILD_TESTS=OFF >/dev/null
    cmake --build build/cmake -j2 --target resplock_cli
    RESPLOCK=$ROOT/build/cmake/resplock
fi
[ -x "$RESPLOCK" ] || fail "the build did not produce $RESPLOCK"
"$RESPLOCK" --version

# --- 3. a throwaway Redis -----------------------------------------------------------------------
WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/resplock-demo.XXXXXX")
REDIS_PID=
cleanup() {
    if [ -n "$REDIS_PID" ]; then
        kill "$REDIS_PID" 2>/dev/null || true
        wait "$REDIS_PID" 2>/dev/null || true
    fi
    rm -rf "$WORKDIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

say "Starting a throwaway redis-server on 127.0.0.1 (no persistence)"
for _ in $(seq 1 30); do
    PORT=$((20000 + RANDOM % 40000))
    port_in_use "$PORT" && continue
    redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$WORKDIR" --logfile "$WORKDIR/redis.log" --daemonize no &
    REDIS_PID=$!
    for _ in $(seq 1 50); do
        [ "$(redis-cli -h 127.0.0.1 -p "$PORT" PING 2>/dev/null)" = PONG ] && break 2
        kill -0 "$REDIS_PID" 2>/dev/null || break  # it exited: the port was taken after all
        sleep 0.1
    done
    kill "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
    REDIS_PID=
done
[ -n "$REDIS_PID" ] || fail "could not start redis-server (see $WORKDIR/redis.log)"
export REDIS_URL="redis://127.0.0.1:$PORT"
echo "redis-server pid $REDIS_PID listening on $REDIS_URL"
rcli() { redis-cli -h 127.0.0.1 -p "$PORT" "$@"; }
rcli SET demo:counter 0 >/dev/null

# --- 4. contending workers ----------------------------------------------------------------------
say "$WORKERS workers, $ROUNDS rounds each, all wanting the lock '$KEY'"
cat <<EOF
Each round is:  resplock --wait 30000 run $KEY -- <critical section>
The critical section reads demo:counter, waits ${HOLD_SECONDS}s, and writes it back plus one:
without the lock, workers would overwrite each other's increments. Between rounds each
worker does a little other work outside the lock.

EOF

# The critical section, run by resplock only while it holds the lock. It sees RESPLOCK_KEY and
# RESPLOCK_TOKEN (the lock's random owner token) in its environment.
# shellcheck disable=SC2016  # expanded by the inner bash, not here
critical='
    now() { date +%H:%M:%S.%3N; }
    echo "$(now)  worker $WORKER: got the lock (token ${RESPLOCK_TOKEN:0:8}...)"
    v=$(redis-cli -h 127.0.0.1 -p "$PORT" GET demo:counter)
    sleep "$HOLD_SECONDS"
    redis-cli -h 127.0.0.1 -p "$PORT" SET demo:counter $((v + 1)) >/dev/null
    echo "$(now)  worker $WORKER: counter $v -> $((v + 1)), releasing"
'

worker() {
    local n=$1
    for _ in $(seq 1 "$ROUNDS"); do
        echo "$(date +%H:%M:%S.%3N)  worker $n: waiting for the lock"
        WORKER=$n PORT=$PORT HOLD_SECONDS=$HOLD_SECONDS \
            "$RESPLOCK" --wait 30000 --ttl 5000 run "$KEY" -- bash -c "$critical" ||
            { echo "worker $n: resplock run failed with exit code $?" >&2; return 1; }
        sleep "0.$((RANDOM % 3 + 1))"  # other work, outside the lock
    done
}

pids=()
for n in $(seq 1 "$WORKERS"); do
    worker "$n" &
    pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do
    wait "$pid" || failed=1
done
((failed == 0)) || fail "a worker failed"

expected=$((WORKERS * ROUNDS))
counter=$(rcli GET demo:counter)
echo
echo "shared counter: $counter (expected $expected: $WORKERS workers x $ROUNDS rounds)"
[ "$counter" = "$expected" ] || fail "the counter is wrong: the lock did not exclude"

status_of() {
    local out rc=0
    out=$("$RESPLOCK" status "$1") || rc=$?
    printf '$ resplock status %s\n%s   (exit code %s)\n' "$1" "$out" "$rc"
}
status_of "$KEY"

# --- 5. the single commands ---------------------------------------------------------------------
say "One lock by hand: acquire, status, a second (busy) acquire, release"
token=$("$RESPLOCK" --ttl 10000 acquire demo:manual)
printf '$ resplock --ttl 10000 acquire demo:manual\n%s   (the token; keep it to release)\n' \
    "$token"
status_of demo:manual
[ "$("$RESPLOCK" status demo:manual | cut -d' ' -f1)" = held ] || fail "status should say held"

echo '$ resplock acquire demo:manual        # someone else tries'
rc=0
"$RESPLOCK" acquire demo:manual 2>&1 || rc=$?
echo "exit code $rc (the lock is busy)"
[ "$rc" -eq 75 ] || fail "a busy acquire should exit 75, not $rc"

echo '$ resplock release demo:manual <wrong token>'
rc=0
"$RESPLOCK" release demo:manual 00000000000000000000000000000000 2>&1 || rc=$?
echo "exit code $rc (that token does not own the lock)"
[ "$rc" -eq 1 ] || fail "releasing with a wrong token should exit 1, not $rc"

echo "\$ resplock release demo:manual \"\$token\""
"$RESPLOCK" release demo:manual "$token"
echo "exit code 0 (released)"
status_of demo:manual

say "Done: every step behaved as expected"
