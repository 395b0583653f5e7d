#!/usr/bin/env bash
# The benchmark: round trips, client CPU, hand-off under contention, footprint and heap use of
# resplock next to references, all against one redis-server on loopback, in one run.
#   bench/run.sh [--quick]
# Builds a Release (-O2) build in build/bench (RESPLOCK_BENCH_BUILD overrides), starts its own
# redis-server on a free 127.0.0.1 port (no persistence) and stops it on exit, runs the five
# parts, then prints a table and `name value unit` lines. Absolute times depend on the machine;
# compare the ratios, which come from runs interleaved on the same server.
# Exits non-zero only when a part could not run or an invariant failed (heap use, exclusion).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

quick=0
case "${1:-}" in
    --quick) quick=1 ;;
    "") ;;
    *)
        echo "usage: bench/run.sh [--quick]" >&2
        exit 64
        ;;
esac
if ((quick)); then
    cycles=2000 rounds=2 handoff_s=1 cg_short=200 cg_long=600 heap_cycles=500
else
    cycles=20000 rounds=7 handoff_s=5 cg_short=1000 cg_long=3000 heap_cycles=2000
fi
hold_ms=5
build=${RESPLOCK_BENCH_BUILD:-build/bench}
mkdir -p "$build"
build=$(cd "$build" && pwd)

# ---- packages (scripts/install-deps.sh, as for the tests) ----
./scripts/install-deps.sh bench
./scripts/install-deps.sh --optional targets  # without them the Cortex-M4 figures are skipped
for tool in cmake redis-server redis-cli redis-benchmark valgrind callgrind_annotate python3 size; do
    command -v "$tool" >/dev/null || {
        echo "run.sh: $tool is missing; the benchmark cannot run" >&2
        exit 1
    }
done

# ---- build: the library exactly as users compile it (-O2), plus the bench programs ----
echo "Building (Release, -O2) in $build ..."
cmake -S bench -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build/cmake.log" ||
    { cat "$build/cmake.log"; exit 1; }
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" >>"$build/cmake.log" ||
    { cat "$build/cmake.log"; exit 1; }
bench=$build/resplock_bench
preload=$build/libmalloc_count.so

# ---- one redis-server on a free loopback port, stopped on any exit ----
server_pid=
stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
}
trap stop_server EXIT
trap 'exit 130' INT TERM
for attempt in 1 2 3 4 5; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
        --logfile "$build/redis.log" &
    server_pid=$!
    for _ in $(seq 50); do
        redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && break 2
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    stop_server
    server_pid=
done
[ -n "$server_pid" ] || { echo "run.sh: redis-server did not start" >&2; exit 1; }
cli() { redis-cli -p "$port" "$@"; }

# The library's own release script (owner_script in src/lock.cpp: its SHA1, then its text as
# adjacent string literals), loaded once so every EVALSHA hits.
owner_script() { # sha | text
    python3 - "$1" src/lock.cpp <<'PY'
import re, sys
block = re.search(r"owner_script\s*=\s*\{(.*?)\};", open(sys.argv[2]).read(), re.S).group(1)
parts = re.findall(r'"((?:[^"\\]|\\.)*)"', block)
print(parts[0] if sys.argv[1] == "sha" else "".join(parts[1:]))
PY
}
script_sha=$(owner_script sha)
script_text=$(owner_script text)
loaded=$(cli SCRIPT LOAD "$script_text")
if [ -z "$script_sha" ] || [ "$loaded" != "$script_sha" ]; then
    echo "run.sh: the script read from src/lock.cpp does not hash to its SHA1" >&2
    exit 1
fi

raw=$build/raw.txt
: >"$raw"
record() { echo "$1 $2 $3" >>"$raw"; }
field() { awk -v k="$1" '$1 == k { print $2 }'; }
# Server time (usec) spent in one command since the last CONFIG RESETSTAT.
server_usec() { cli INFO commandstats | tr -d '\r' | sed -n "s/^cmdstat_$1:.*,usec=\([0-9]*\),.*/\1/p"; }
server_us_per_cycle() {
    local set eval
    set=$(server_usec set)
    eval=$(server_usec evalsha)
    echo "${set:-0} ${eval:-0} $1" | awk '{ printf "%.3f", ($1 + $2) / $3 }'
}

# ---- 1. uncontended cycle rate, interleaved rounds ----
value=0123456789abcdef0123456789abcdef  # the length of our tokens
key='bench:k:__rand_int__'               # 20 bytes like ours; 12 digits below our key's number
echo "1/5 cycle rate: $rounds rounds of $cycles cycles ..."
rb() {
    redis-benchmark -p "$port" -c 1 -P 1 -n "$cycles" -r 2000000000 --csv "$@" |
        tail -n 1 | cut -d, -f2 | tr -d '"'
}
for r in $(seq "$rounds"); do
    for client in ours hiredis raw; do
        cli CONFIG RESETSTAT >/dev/null
        out=$("$bench" cycle "$client" "$port" "$cycles" "$script_sha")
        record "round$r.$client" "$(field cycles_per_s <<<"$out")" cycles/s
        record "round$r.$client.server" "$(server_us_per_cycle "$cycles")" us/cycle
    done
    cli CONFIG RESETSTAT >/dev/null
    record "round$r.limit_set" "$(rb SET "$key" "$value" NX PX 30000)" ops/s
    set_us=$(server_usec set)
    cli FLUSHALL >/dev/null  # drop the keys the SETs made (the script cache stays)
    cli CONFIG RESETSTAT >/dev/null
    record "round$r.limit_evalsha" "$(rb EVALSHA "$script_sha" 1 "$key" "$value")" ops/s
    eval_us=$(server_usec evalsha)
    record "round$r.limit.server" "$(echo "$set_us $eval_us $cycles" |
        awk '{ printf "%.3f", ($1 + $2) / $3 }')" us/cycle
done

# ---- 2. user-space instructions per cycle (callgrind), start-up subtracted ----
echo "2/5 instructions per cycle: callgrind, $cg_short and $cg_long cycles ..."
for client in ours hiredis; do
    for n in "$cg_short" "$cg_long"; do
        out=$build/callgrind.$client.$n
        valgrind --tool=callgrind --callgrind-out-file="$out.out" \
            "$bench" cycle "$client" "$port" "$n" "$script_sha" >/dev/null 2>"$out.log" ||
            { cat "$out.log"; exit 1; }
        record "callgrind.$client.$n" "$(awk '/^(summary|totals):/ { print $2; exit }' "$out.out")" Ir
        callgrind_annotate --threshold=100 "$out.out" >"$out.txt"
    done
done
record callgrind.short "$cg_short" cycles
record callgrind.long "$cg_long" cycles

# ---- 3. contended hand-off ----
echo "3/5 hand-off: backoff, poll, wake; K = 2, 4, 8 processes, hold $hold_ms ms, $handoff_s s each ..."
for strategy in backoff poll wake; do
    for k in 2 4 8; do
        out=$("$bench" handoff "$strategy" "$port" "$k" "$hold_ms" "$handoff_s")
        while read -r name val; do
            record "handoff.$strategy.k$k.$name" "$val" -
        done <<<"$out"
    done
done

# The round trip a hand-off pays: a client that was asleep, like a woken waiter.
out=$("$bench" idle_rtt "$port" 500 2000)
while read -r name val; do
    record "idle_rtt.$name" "$val" -
done <<<"$out"

# ---- 4. footprint ----
echo "4/5 footprint ..."
if command -v arm-none-eabi-g++ >/dev/null; then
    # The budget itself is checked by the test suite (target.cortex_m4.size): an over-budget
    # report still gives its figures here, with a warning.
    make -s -C "$repo" size SIZE_BUILD="$build/size-cortex-m4" >"$build/size.log" 2>&1 ||
        echo "run.sh: make size failed or reported over budget (see $build/size.log)" >&2
    if grep -q '^cortex_m4\.core_flash ' "$build/size.log"; then
        grep '^cortex_m4\.' "$build/size.log" >>"$raw"
    else
        record cortex_m4.skipped 1 -
    fi
else
    record cortex_m4.skipped 1 -
fi
lib_size() { # file bytes, then text+data+bss of its objects
    record "x86_64.$1.file" "$(stat -c %s "$2")" bytes
    record "x86_64.$1.code" "$(size -t "$2" | awk 'END { print $1 + $2 + $3 }')" bytes
}
lib_size resplock "$build/resplock/libresplock.a"
lib_size resplock_posix "$build/resplock/libresplock_posix.a"
hiredis_a=$(gcc -print-file-name=libhiredis.a)
[ -f "$hiredis_a" ] || { echo "run.sh: $hiredis_a not found" >&2; exit 1; }
lib_size hiredis "$hiredis_a"

# ---- 5. heap calls inside the measured loop (LD_PRELOAD counter) ----
echo "5/5 heap calls: $heap_cycles cycles each under the malloc counter ..."
for client in ours hiredis; do
    out=$(LD_PRELOAD=$preload "$bench" cycle "$client" "$port" "$heap_cycles" "$script_sha")
    record "heap.$client.allocs" "$(field heap_allocs <<<"$out")" calls
    record "heap.$client.frees" "$(field heap_frees <<<"$out")" calls
done
record heap.cycles "$heap_cycles" cycles

echo
python3 bench/report.py "$raw" "$build"
