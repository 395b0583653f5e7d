#!/usr/bin/env bash
# The benchmark: round trips, client CPU, hand-off under contention, footprint and heap use of
# resplock next to references, all against one redis-server on loopback, in one run.
#   bench/run.sh           the full run: parts 1 to 5 (the link and scale modes run apart)
#   bench/run.sh --quick   parts 1 to 5 with the same checks, shorter, then a short link run and
#                          a short scale run (part of scripts/test.sh)
#   bench/run.sh --link    the link mode alone, full length (see "Part 6" below)
#   bench/run.sh --scale   the scale mode alone (see "Part 7" below)
# Builds a Release (-O2) build in build/bench (RESPLOCK_BENCH_BUILD overrides), starts its own
# redis-server on a free 127.0.0.1 port (no persistence) and stops it on exit, runs the parts of
# its mode, then prints a table and `name value unit` lines. Absolute times depend on the machine;
# compare the ratios, which come from runs interleaved on the same server.
# Exits non-zero, with a line saying why, when a part could not run or gave no figures, or an
# invariant failed: the owner script the bench loads is not the library's (the server's SHA1 of
# the library's text differs from the library's SHA1), a heap call by resplock in the measured
# cycles, two holders of the lock at once in the hand-off part (its spread runs included), more
# than N holders of a semaphore with N places.
# Timings and ratios are reported, never checked: they depend on the machine and on whatever else
# runs on it. The hand-off part runs backoff, poll, wake and the fair lock (FairLock), then, for
# backoff, wake and fair, a spread case: processes that try again at once after each release,
# the most and the fewest acquisitions of one process, next to the fair lock's targets. What
# bounds the missed goals is printed with them: the floor client's instructions and ours by layer
# (part 2); the fair release script's round trip on the idle server and the server's own time per
# fair script call during the hand-off cases (part 3).
# Part 3 ends with the counting semaphore (Semaphore), plain and fair, with N = 1, 4 and 16
# places and 2N processes, next to the fair lock with 2 processes run in the same loop: a hand-off
# pass (rejoin) and a spread pass (greedy), handoff_s each case. Its invariant: never more than N
# holders at once, from the recorded hold intervals and the live count.
# Part 6, the link mode: the hand-off part (rejoin, hold 5 ms, K = 4 and 32) through our delay
# proxy (bench/delay_proxy.cpp) at D = 1 ms and 10 ms per direction, for resplock's backoff, wake
# and fair locks, and next to them, through the same proxy, Node.js peers (bench/peers/: redlock
# 5 and 4, redis-semaphore's Mutex, at their defaults and tuned, and our imitation of a
# Redisson-style pub/sub wake), whose records resplock_bench's `records` mode turns into the same
# figures. Every hand-off figure is also given in link round trips (PING through the proxy,
# measured in the same run). The peers are optional: without node and npm, or when `npm ci`
# fails, they are skipped with one line. Invariants: 0 overlaps in every case, and Node's clock
# (process.hrtime.bigint) is CLOCK_MONOTONIC, the clock of resplock_bench.
# Part 7, the scale mode (bench/scale.cpp, resplock_scale): many devices, each a thread with its
# own connection and lock object over the POSIX port, contend for many keys (device d on key
# d % keys), each acquiring, holding 5 ms, releasing and trying again at once: resplock's FairLock,
# plain Lock (try_acquire's default retry) and Semaphore (N = 10, plain and fair modes, on a tenth
# of the keys), on the bench's server and on a 3-master Redis Cluster started on free loopback
# ports (no replicas), then the Node peers (bench/peers/scale.js: redlock 5, redis-semaphore's
# Mutex and Semaphore, the pub/sub imitation) on the single server (one ioredis connection per
# device) and on the same cluster (one ioredis Cluster client per device: it connects to the
# masters it sends commands to, 1 to 3 connections a device, counted), whose records
# `resplock_scale records` turns into the same figures: acquisitions per second, requests per
# acquisition (INFO commandstats), server CPU per acquisition (INFO used_cpu deltas) next to an
# uncontended acquire + release's and split by command (commandstats usec, the commands that
# scripts call included), hand-off p50 and p99, the spread per key, memory and connections per
# device.
# Invariants: 0 overlaps on every key (at most N holders for the semaphore), acquisitions > 0.
# --quick runs a short case of it (100 devices, 10 keys, 2 s, the fair lock on one server).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

usage() {
    cat <<'EOF'
usage: bench/run.sh [--quick | --link | --scale]
  (no argument)  the full run, parts 1 to 5: 7 rounds of 20000 cycles, 5 s per hand-off
                 case, 10 s per spread case, 5 s per semaphore case (the link and scale modes
                 not included: they run apart, with --link and --scale)
  --quick        a short run with the same parts and invariant checks (2 rounds of 2000
                 cycles, 1 s per hand-off, spread and semaphore case), then a short link run
                 (D = 1 ms, K = 4, 1 s each: resplock's fair lock and, with Node, one peer) and
                 a short scale run (100 devices, 10 keys, 2 s, the fair lock on one server); its
                 figures are too short to quote
  --link         the link mode alone: D = 1 and 10 ms, K = 4 and 32, 5 s per case, resplock's
                 backoff, wake and fair locks and the Node peers (about 5 minutes)
  --scale        the scale mode alone: 300 devices (threads, one connection each), 30 keys
                 (3 for the semaphore), hold 5 ms, 20 s per case: resplock's fair lock, plain
                 lock and semaphore (plain and fair) on one server and on a 3-master cluster; a
                 sweep of the fair lock at 100, 300, 1000 and 2000 devices (5 s each); the Node
                 peers on one server and on the cluster (about 7 minutes)
  -h, --help     this text
Environment: RESPLOCK_BENCH_BUILD, the build folder (default build/bench); for --scale,
RESPLOCK_SCALE_DEVICES, RESPLOCK_SCALE_KEYS, RESPLOCK_SCALE_SECONDS (300, devices / 10, 20) and
RESPLOCK_SCALE_SWEEP (the sweep's device counts, "100 300 1000 2000"; empty: no sweep).
EOF
}

quick=0 link_only=0 scale_only=0
case "$#:${1:-}" in
    0:) ;;
    1:--quick) quick=1 ;;
    1:--link) link_only=1 ;;
    1:--scale) scale_only=1 ;;
    1:-h | 1:--help)
        usage
        exit 0
        ;;
    *)
        echo "bench/run.sh: unexpected argument(s): $*" >&2
        usage >&2
        exit 64
        ;;
esac
if ((quick)); then
    cycles=2000 rounds=2 handoff_s=1 spread_s=1 cg_short=200 cg_long=600 heap_cycles=500
else
    cycles=20000 rounds=7 handoff_s=5 spread_s=10 cg_short=1000 cg_long=3000 heap_cycles=2000
fi
hold_ms=5
if ((quick)); then
    link_delays_us="1000" link_ks="4" link_s=1 link_pings=100
    link_resplock="fair" link_peers="mutex:tuned"
else
    link_delays_us="1000 10000" link_ks="4 32" link_s=5 link_pings=400
    link_resplock="backoff wake fair"
    link_peers="redlock5:defaults redlock5:tuned redlock4:defaults redlock4:tuned mutex:defaults"
    link_peers+=" mutex:tuned pubsub:imitation"
fi
jobs=$(nproc 2>/dev/null || echo 2)
build=${RESPLOCK_BENCH_BUILD:-build/bench}
mkdir -p "$build"
build=$(cd "$build" && pwd)

part="set-up"
# A part that could not run or gave no figure: one line saying which, then exit 1.
fail() {
    echo "run.sh: FAILED ($part): $*" >&2
    exit 1
}
# A broken invariant: one line saying which, then exit 1.
invariant_failed() {
    echo "run.sh: INVARIANT FAILED ($part): $*" >&2
    exit 1
}

# ---- packages (scripts/install-deps.sh, as for the tests) ----
./scripts/install-deps.sh bench
./scripts/install-deps.sh --optional targets # without them the Cortex-M4 figures are skipped
for tool in cmake make redis-server redis-cli redis-benchmark valgrind callgrind_annotate python3 \
    size; do
    command -v "$tool" >/dev/null || fail "$tool is missing; the benchmark cannot run"
done

# ---- build: the library exactly as users compile it (-O2), plus the bench programs ----
part="build"
echo "Building (Release, -O2) in $build ..."
cmake -S bench -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build/cmake.log" 2>&1 ||
    { cat "$build/cmake.log"; fail "cmake could not configure bench/ (log above)"; }
cmake --build "$build" -j "$jobs" >>"$build/cmake.log" 2>&1 ||
    { cat "$build/cmake.log"; fail "the build failed (log above)"; }
bench=$build/resplock_bench
preload=$build/libmalloc_count.so

# ---- one redis-server on a free loopback port, stopped on any exit ----
part="redis-server"
server_pid=
proxy_pid=
cluster_pids=()
stop_server() {
    local pid
    for pid in "${cluster_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [ -n "$proxy_pid" ]; then
        kill "$proxy_pid" 2>/dev/null || true
        wait "$proxy_pid" 2>/dev/null || true
    fi
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
}
trap stop_server EXIT
trap 'exit 130' INT TERM
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
for _ in 1 2 3 4 5; do # a few ports, in case another program takes the one picked
    port=$(free_port)
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
[ -n "$server_pid" ] || fail "redis-server did not start (see $build/redis.log)"
cli() { redis-cli -p "$port" "$@"; }

raw=$build/raw.txt
: >"$raw"
# One figure: name, value (a number, else the part gave no figure), unit.
record() {
    [[ ${2:-} =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || fail "no figure for $1 (got '${2:-}')"
    echo "$1 $2 $3" >>"$raw"
}
field() { awk -v k="$1" '$1 == k { print $2 }'; }
# Server time (usec), and calls, of one command since the last CONFIG RESETSTAT.
server_usec() { cli INFO commandstats | tr -d '\r' | sed -n "s/^cmdstat_$1:.*,usec=\([0-9]*\),.*/\1/p"; }
server_calls() {
    local calls
    calls=$(cli INFO commandstats | tr -d '\r' | sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p")
    echo "${calls:-0}"
}
server_us_per_cycle() {
    local set eval
    set=$(server_usec set)
    eval=$(server_usec evalsha)
    echo "${set:-0} ${eval:-0} $1" | awk '{ printf "%.3f", ($1 + $2) / $3 }'
}
record plan.rounds "$rounds" rounds

# ---- the owner script: the library's own (release, extend and query go through it) ----
# Taken from the library (resplock_bench links it), loaded once so that every EVALSHA hits. The
# server's SHA1 of the text must be the library's SHA1, which the library sends with EVALSHA.
part="owner script"
script_sha=$("$bench" script-sha) || fail "resplock_bench script-sha failed"
script_text=$("$bench" script-text) || fail "resplock_bench script-text failed"
[[ $script_sha =~ ^[0-9a-f]{40}$ ]] ||
    fail "the library's script SHA1 is not 40 hex digits: '$script_sha'"
[ -n "$script_text" ] || fail "the library's script text is empty"
loaded=$(cli SCRIPT LOAD "$script_text") || fail "SCRIPT LOAD failed"
if [ "$loaded" != "$script_sha" ]; then
    invariant_failed "the server's SHA1 of the library's owner script text is '$loaded'," \
        "the library's own SHA1 (the one it sends with EVALSHA) is $script_sha"
fi
echo "Owner script $script_sha loaded (the server's SHA1 matches the library's)"
record script.digest_match 1 -

if ((!link_only && !scale_only)); then
# ---- 1. uncontended cycle rate, interleaved rounds ----
part="1/5 cycle rate"
value=0123456789abcdef0123456789abcdef # the length of our tokens
key='bench:k:__rand_int__'             # 20 bytes like ours; 12 digits below our key's number
echo "$part: $rounds rounds of $cycles cycles ..."
rb() {
    redis-benchmark -p "$port" -c 1 -P 1 -n "$cycles" -r 2000000000 --csv "$@" |
        tail -n 1 | cut -d, -f2 | tr -d '"'
}
for r in $(seq "$rounds"); do
    for client in ours hiredis raw; do
        cli CONFIG RESETSTAT >/dev/null
        out=$("$bench" cycle "$client" "$port" "$cycles") ||
            fail "resplock_bench cycle $client failed"
        record "round$r.$client" "$(field cycles_per_s <<<"$out")" cycles/s
        record "round$r.$client.server" "$(server_us_per_cycle "$cycles")" us/cycle
        # Every release of the library found its script cached: it sent the SHA1 loaded above.
        evals=$(server_calls eval)
        [ "$evals" = 0 ] ||
            invariant_failed "$client sent EVAL $evals times: its EVALSHA missed the loaded script"
    done
    cli CONFIG RESETSTAT >/dev/null
    record "round$r.limit_set" "$(rb SET "$key" "$value" NX PX 30000)" ops/s
    set_us=$(server_usec set)
    cli FLUSHALL >/dev/null # drop the keys the SETs made (the script cache stays)
    cli CONFIG RESETSTAT >/dev/null
    record "round$r.limit_evalsha" "$(rb EVALSHA "$script_sha" 1 "$key" "$value")" ops/s
    eval_us=$(server_usec evalsha)
    record "round$r.limit.server" "$(echo "$set_us $eval_us $cycles" |
        awk '{ printf "%.3f", ($1 + $2) / $3 }')" us/cycle
done

# ---- 2. user-space instructions per cycle (callgrind), start-up subtracted ----
part="2/5 instructions per cycle"
echo "$part: callgrind, $cg_short and $cg_long cycles ..."
for client in ours hiredis raw; do
    for n in "$cg_short" "$cg_long"; do
        out=$build/callgrind.$client.$n
        valgrind --tool=callgrind --callgrind-out-file="$out.out" \
            "$bench" cycle "$client" "$port" "$n" >/dev/null 2>"$out.log" ||
            { cat "$out.log"; fail "callgrind of $client, $n cycles, failed (log above)"; }
        record "callgrind.$client.$n" "$(awk '/^(summary|totals):/ { print $2; exit }' "$out.out")" Ir
        callgrind_annotate --threshold=100 "$out.out" >"$out.txt" ||
            fail "callgrind_annotate $out.out failed"
    done
done
record callgrind.short "$cg_short" cycles
record callgrind.long "$cg_long" cycles

# ---- 3. contended hand-off ----
part="3/5 hand-off"
echo "$part: backoff, poll, wake, fair; K = 2, 4, 8 processes, hold $hold_ms ms, $handoff_s s each ..."
for strategy in backoff poll wake fair; do
    for k in 2 4 8; do
        out=$("$bench" handoff "$strategy" "$port" "$k" "$hold_ms" "$handoff_s") ||
            fail "resplock_bench handoff $strategy with $k processes failed"
        while read -r name val; do
            record "handoff.$strategy.k$k.$name" "$val" -
        done <<<"$out"
    done
done

# Starvation: every process tries again at once after its release (greedy), for spread_s; the
# spread is between the most and the fewest acquisitions of one process.
echo "$part: spread: backoff, wake, fair; K = 2, 4, 8 greedy processes, $spread_s s each ..."
for strategy in backoff wake fair; do
    for k in 2 4 8; do
        out=$("$bench" handoff "$strategy" "$port" "$k" "$hold_ms" "$spread_s" greedy) ||
            fail "resplock_bench handoff $strategy greedy with $k processes failed"
        while read -r name val; do
            record "spread.$strategy.k$k.$name" "$val" -
        done <<<"$out"
    done
done

# The round trip a hand-off pays: a client that was asleep, like a woken waiter.
out=$("$bench" idle_rtt "$port" 500 2000) || fail "resplock_bench idle_rtt failed"
while read -r name val; do
    record "idle_rtt.$name" "$val" -
done <<<"$out"

# The counting semaphore: N places, 2N processes, plain (sem) and fair (fairsem), and the fair
# lock with 2 processes as the N = 1 baseline, one after the other in one loop. The hand-off pass
# (rejoin: a process tries again once another acquired after its release), then the spread pass
# (greedy: it tries again at once).
echo "$part: semaphore: plain and fair, N = 1, 4, 16 places, 2N processes, next to the fair lock" \
    "(2 processes); hold $hold_ms ms, $handoff_s s each, hand-off then spread ..."
for join in rejoin greedy; do
    if [ "$join" = greedy ]; then pass=spread; else pass=handoff; fi
    for spec in fair:1 sem:1 fairsem:1 sem:4 fairsem:4 sem:16 fairsem:16; do
        strategy=${spec%:*} n=${spec#*:}
        case $strategy in
            fair) kind=fairlock ;;
            sem) kind=plain ;;
            *) kind=fair ;;
        esac
        out=$("$bench" handoff "$strategy" "$port" $((2 * n)) "$hold_ms" "$handoff_s" "$join" \
            "$n") || fail "resplock_bench handoff $strategy $join with limit $n failed"
        while read -r name val; do
            record "semaphore.$pass.$kind.n$n.$name" "$val" -
        done <<<"$out"
    done
done

# ---- 4. footprint ----
part="4/5 footprint"
echo "$part ..."
if command -v arm-none-eabi-g++ >/dev/null; then
    # The budget itself is checked by the test suite (target.cortex_m4.size): an over-budget
    # report still gives its figures here, with a warning. Every output goes under $build.
    make -s -j "$jobs" -C "$repo" size BUILD="$build/make" SIZE_BUILD="$build/size-cortex-m4" \
        >"$build/size.log" 2>&1 ||
        echo "run.sh: make size failed or reported over budget (see $build/size.log)" >&2
    grep -q '^cortex_m4\.core_flash ' "$build/size.log" ||
        { cat "$build/size.log"; fail "make size printed no Cortex-M4 figures (log above)"; }
    grep '^cortex_m4\.' "$build/size.log" >>"$raw"
else
    echo "run.sh: arm-none-eabi-g++ is not installed: no Cortex-M4 figures" >&2
    record cortex_m4.skipped 1 -
fi
lib_size() { # file bytes, then text+data+bss of its objects
    [ -f "$2" ] || fail "$2 not found"
    record "x86_64.$1.file" "$(stat -c %s "$2")" bytes
    record "x86_64.$1.code" "$(size -t "$2" | awk 'END { print $1 + $2 + $3 }')" bytes
}
lib_size resplock "$build/resplock/libresplock.a"
lib_size resplock_posix "$build/resplock/libresplock_posix.a"
lib_size hiredis "$(gcc -print-file-name=libhiredis.a)"

# ---- 5. heap calls inside the measured loop (LD_PRELOAD counter) ----
part="5/5 heap calls"
echo "$part: $heap_cycles cycles each under the malloc counter ..."
for client in ours hiredis; do
    out=$(LD_PRELOAD=$preload "$bench" cycle "$client" "$port" "$heap_cycles") ||
        fail "resplock_bench cycle $client under the malloc counter failed"
    record "heap.$client.allocs" "$(field heap_allocs <<<"$out")" calls
    record "heap.$client.frees" "$(field heap_frees <<<"$out")" calls
done
record heap.cycles "$heap_cycles" cycles

# ---- the report; it checks that every figure is there and the invariants hold ----
part="report"
echo
python3 bench/report.py "$raw" "$build" || {
    echo "run.sh: FAILED: see the INVARIANT FAILED / MISSING lines above (raw figures: $raw)" >&2
    exit 1
}
fi # parts 1 to 5

# The peers: Node.js and the pinned packages (npm ci from bench/peers/package-lock.json into
# $build/peers; reused while the lock file is unchanged). Optional: skipped with one line.
peers_dir=$build/peers
peers_ok=0
setup_peers() {
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        echo "run.sh: node or npm is missing: the Node peers are skipped"
        return
    fi
    mkdir -p "$peers_dir"
    if cmp -s bench/peers/package-lock.json "$peers_dir/package-lock.json" &&
        [ -f "$peers_dir/node_modules/.installed" ]; then
        peers_ok=1
        return
    fi
    cp bench/peers/package.json bench/peers/package-lock.json "$peers_dir/"
    if (cd "$peers_dir" && npm ci --no-audit --no-fund >npm.log 2>&1); then
        touch "$peers_dir/node_modules/.installed"
        peers_ok=1
    else
        echo "run.sh: npm ci failed (see $peers_dir/npm.log): the Node peers are skipped"
    fi
}

if ((quick || link_only)); then
# ---- 6. link: hand-off through the delay proxy, resplock next to Node peers ----
part="6/6 link"
link_started=$SECONDS
link_raw=$build/link_raw.txt
: >"$link_raw"
link_record() {
    [[ ${2:-} =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || fail "no figure for $1 (got '${2:-}')"
    echo "$1 $2 $3" >>"$link_raw"
}
link_record link.plan.seconds "$link_s" s
link_record link.plan.hold "$hold_ms" ms

setup_peers
if ((peers_ok)); then
    # One clock: a reading of Node's process.hrtime.bigint() lies between two of
    # CLOCK_MONOTONIC's (resplock_bench now), so holds recorded by both compare.
    before=$("$bench" now)
    node_ns=$(node -e 'console.log(process.hrtime.bigint().toString())')
    after=$("$bench" now)
    python3 -c 'import sys; a, b, c = map(int, sys.argv[1:]); sys.exit(0 if a <= b <= c else 1)' \
        "$before" "$node_ns" "$after" ||
        invariant_failed "Node's process.hrtime.bigint() ($node_ns) is not between two readings" \
            "of CLOCK_MONOTONIC ($before, $after): the peers' holds cannot be compared"
    link_record link.clock.node_between_monotonic 1 -
    link_record link.clock.node_after_us "$(((node_ns - before) / 1000))" us
    echo "Node $(node --version): process.hrtime.bigint() reads CLOCK_MONOTONIC (a reading lies" \
        "between two of resplock_bench's)"
else
    link_record link.peers.skipped 1 -
    link_peers=""
fi
link_record link.plan.peer_count "$(wc -w <<<"$link_peers")" peers

# The round trip with no proxy, as the link's are measured: a client asleep 2 ms before each PING.
out=$("$bench" ping_rtt "$port" "$link_pings" 2000) || fail "resplock_bench ping_rtt failed"
while read -r name val; do
    link_record "link.direct.ping.$name" "$val" us
done <<<"$out"

for d in $link_delays_us; do
    echo "$part: D = $d us per direction: link round trip, then $link_resplock" \
        "${link_peers:+and $link_peers }with K = $link_ks, hold $hold_ms ms, $link_s s each ..."
    rm -f "$build/proxy.port"
    "$build/delay_proxy" "$port" "$d" "$build/proxy.port" >/dev/null 2>"$build/proxy.$d.log" &
    proxy_pid=$!
    for _ in $(seq 50); do
        [ -s "$build/proxy.port" ] && break
        sleep 0.1
    done
    [ -s "$build/proxy.port" ] || fail "the delay proxy did not start (see $build/proxy.$d.log)"
    pport=$(cat "$build/proxy.port")
    p=link.d$d
    out=$("$bench" ping_rtt "$pport" "$link_pings" 2000) ||
        fail "resplock_bench ping_rtt through the proxy failed"
    while read -r name val; do
        link_record "$p.ping.$name" "$val" us
    done <<<"$out"
    for k in $link_ks; do
        for strategy in $link_resplock; do
            out=$("$bench" handoff "$strategy" "$pport" "$k" "$hold_ms" "$link_s") ||
                fail "resplock_bench handoff $strategy, $k processes, through the proxy failed"
            while read -r name val; do
                link_record "$p.resplock.$strategy.k$k.$name" "$val" -
            done <<<"$out"
        done
        for spec in $link_peers; do
            peer=${spec%:*} setting=${spec#*:}
            cli DEL bench:peer mutex:bench:peer >/dev/null
            cli CONFIG RESETSTAT >/dev/null
            rec=$build/peer.$peer.$setting.d$d.k$k.txt
            rm -f "$rec"
            NODE_PATH=$peers_dir/node_modules timeout $((link_s + 120)) node bench/peers/driver.js \
                "$peer" "$setting" "$pport" "$k" "$hold_ms" "$link_s" "$rec" ||
                fail "the Node driver failed for $peer ($setting), $k clients"
            scripted=1
            [ "$peer" = mutex ] && scripted=0 # its attempts are plain SETs
            out=$("$bench" records "$port" "$k" "$link_s" "$scripted" "$rec") ||
                fail "resplock_bench records failed for $peer ($setting), $k clients"
            while read -r name val; do
                link_record "$p.$peer.$setting.k$k.$name" "$val" -
            done <<<"$out"
        done
    done
    # The link's round trip again at the end of its cases, and the proxy's own account of how
    # late it wrote the chunks after their due time.
    out=$("$bench" ping_rtt "$pport" "$link_pings" 2000) ||
        fail "resplock_bench ping_rtt through the proxy failed"
    while read -r name val; do
        link_record "$p.ping_after.$name" "$val" us
    done <<<"$out"
    kill "$proxy_pid"
    wait "$proxy_pid" || true
    proxy_pid=
    while read -r name val; do
        link_record "$p.proxy.$name" "$val" -
    done <"$build/proxy.$d.log"
    link_record "$p.plan.delay" "$d" us
done
link_record link.plan.delays "$(wc -w <<<"$link_delays_us")" count

part="link report"
echo
echo "The link part took $((SECONDS - link_started)) s (the whole run $SECONDS s)."
python3 bench/report.py --link "$link_raw" "$link_delays_us" "$link_ks" "$link_resplock" \
    "$link_peers" || {
    echo "run.sh: FAILED: see the INVARIANT FAILED / MISSING lines above (raw figures:" \
        "$link_raw)" >&2
    exit 1
}
fi # part 6

# ---- 7. scale: many devices, one connection each, on many keys ----
if ((quick || scale_only)); then
part="7/7 scale"
scale_started=$SECONDS
scale=$build/resplock_scale
scale_raw=$build/scale_raw.txt
: >"$scale_raw"
scale_record() {
    [[ ${2:-} =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || fail "no figure for $1 (got '${2:-}')"
    echo "$1 $2 $3" >>"$scale_raw"
}
if ((quick)); then
    scale_devices=100 scale_keys=10 scale_s=2
    scale_cases="single:fair" scale_peers="" scale_sweep=""
else
    # 300 devices: the most that this 2-core machine serves without the hand-off waiting for a
    # CPU (the sweep below shows where that begins; bench/RESULTS.md, "Scale").
    scale_devices=${RESPLOCK_SCALE_DEVICES:-300}
    scale_keys=${RESPLOCK_SCALE_KEYS:-$((scale_devices / 10))}
    scale_s=${RESPLOCK_SCALE_SECONDS:-20}
    scale_sweep=${RESPLOCK_SCALE_SWEEP-100 300 1000 2000} scale_sweep_s=5
    scale_cases="single:fair single:lock single:sem single:fairsem cluster:fair cluster:lock"
    scale_cases+=" cluster:sem cluster:fairsem"
    scale_peers="redlock5 mutex pubsub semaphore"
fi
# The semaphore (N = 10 places) on a tenth of the keys: as many devices per place as the locks
# have per key (with 10 devices per key and 10 places nobody would wait).
scale_sem_keys=$(((scale_keys + 9) / 10))
scale_record scale.plan.devices "$scale_devices" devices
scale_record scale.plan.keys "$scale_keys" keys
scale_record scale.plan.sem_keys "$scale_sem_keys" keys
scale_record scale.plan.seconds "$scale_s" s
scale_record scale.plan.hold "$hold_ms" ms

# A Redis Cluster of 3 masters on free loopback ports, no replicas (on 2 cores a replica per
# master would take CPU from the masters and the devices while adding nothing to the path a
# lock request takes), created with redis-cli as the tests' harness does.
start_cluster() {
    local dir=$build/cluster i p bus nodes=()
    rm -rf "$dir"
    for i in 0 1 2; do
        mkdir -p "$dir/$i"
        p=$(free_port)
        bus=$(free_port)
        redis-server --bind 127.0.0.1 --port "$p" --save "" --appendonly no \
            --cluster-enabled yes --cluster-config-file "$dir/$i/nodes.conf" \
            --cluster-port "$bus" --dir "$dir/$i" --logfile "$dir/$i/redis.log" &
        cluster_pids+=($!)
        nodes+=("127.0.0.1:$p")
        cluster_ports+="${cluster_ports:+,}$p"
    done
    for node in "${nodes[@]}"; do
        for _ in $(seq 50); do
            redis-cli -p "${node#*:}" PING 2>/dev/null | grep -q PONG && continue 2
            sleep 0.1
        done
        fail "cluster node $node did not start (see $dir)"
    done
    redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes \
        >"$dir/create.log" 2>&1 ||
        { cat "$dir/create.log"; fail "redis-cli --cluster create failed"; }
    for node in "${nodes[@]}"; do
        for _ in $(seq 100); do
            redis-cli -p "${node#*:}" CLUSTER INFO | grep -q cluster_state:ok && continue 2
            sleep 0.1
        done
        fail "cluster node $node never reported cluster_state:ok"
    done
}

# Checks a case's invariants: acquisitions, and 0 overlaps (at most LIMIT holders of a key).
scale_check() {
    local name=$1 out=$2 limit=$3 acq over most
    acq=$(field acquisitions <<<"$out")
    over=$(field exclusion_overlaps <<<"$out")
    most=$(field max_holders <<<"$out")
    [ "${acq:-0}" -gt 0 ] || invariant_failed "$name: no acquisition"
    [ "$over" = 0 ] || invariant_failed "$name: $over acquisitions overlapped an earlier holder"
    [ "$most" -le "$limit" ] || invariant_failed "$name: $most holders of one key at once"
    return 0
}

cluster_ports=""
for spec in $scale_cases; do
    topo=${spec%:*} kind=${spec#*:}
    if [ "$topo" = cluster ]; then
        [ -n "$cluster_ports" ] || {
            echo "$part: starting a 3-master Redis Cluster ..."
            start_cluster
        }
        ports=$cluster_ports
    else
        ports=$port
    fi
    keys=$scale_keys limit=1
    case $kind in sem | fairsem) keys=$scale_sem_keys limit=10 ;; esac
    echo "$part: $topo, resplock $kind, $scale_devices devices on $keys keys, hold $hold_ms ms," \
        "$scale_s s ..."
    out=$("$scale" run "$kind" "$topo" "$ports" "$scale_devices" "$keys" "$hold_ms" "$scale_s") ||
        fail "resplock_scale run $kind on $topo failed"
    scale_check "$topo $kind" "$out" "$limit"
    while read -r name val; do
        scale_record "scale.$topo.resplock.$kind.$name" "$val" -
    done <<<"$out"
done

# The device count this machine keeps up with: the fair lock on the single server, 10 devices per
# key, at each count of the sweep for scale_sweep_s.
for n in $scale_sweep; do
    echo "$part: sweep: single, resplock fair, $n devices on $((n / 10)) keys, $scale_sweep_s s ..."
    out=$("$scale" run fair single "$port" "$n" $((n / 10)) "$hold_ms" "$scale_sweep_s") ||
        fail "resplock_scale run fair with $n devices failed"
    scale_check "sweep $n" "$out" 1
    while read -r name val; do
        scale_record "scale.sweep.d$n.$name" "$val" -
    done <<<"$out"
done

# The peers, on the single server and on the cluster (bench/peers/scale.js: one ioredis
# connection per device to the single server; on the cluster one ioredis Cluster client per
# device, which follows its key's redirection; the connections it holds are counted).
if [ -n "$scale_peers" ]; then
    setup_peers
    ((peers_ok)) || scale_peers=""
fi
scale_peer_topos="single"
[ -n "$cluster_ports" ] && scale_peer_topos+=" cluster"
for topo in $scale_peer_topos; do
    ports=$port
    [ "$topo" = cluster ] && ports=$cluster_ports
    for peer in $scale_peers; do
        keys=$scale_keys limit=1
        case $peer in
            mutex) cmds=set,evalsha,eval ;; # SET NX attempts, a scripted release
            semaphore) cmds=evalsha,eval,zrem keys=$scale_sem_keys limit=10 ;; # ZREM releases
            pubsub) cmds=evalsha,eval,subscribe,unsubscribe ;;
            *) cmds=evalsha,eval ;;
        esac
        echo "$part: $topo, Node peer $peer, $scale_devices devices on $keys keys, hold" \
            "$hold_ms ms, $scale_s s ..."
        for p in ${ports//,/ }; do redis-cli -p "$p" FLUSHALL >/dev/null; done
        rec=$build/scale.$topo.$peer.txt
        rm -f "$rec" "$rec".*
        NODE_PATH=$peers_dir/node_modules timeout $((scale_s + 300)) node bench/peers/scale.js \
            "$peer" "$topo" "$ports" "$scale_devices" "$keys" "$hold_ms" "$scale_s" "$rec" \
            "$scale" "$limit" || fail "the Node scale driver failed for $peer on $topo"
        out=$("$scale" records "$topo" "$ports" "$scale_devices" "$keys" "$scale_s" "$limit" \
            "$cmds" "$rec") || fail "resplock_scale records failed for $peer on $topo"
        scale_check "$topo peer $peer" "$out" "$limit"
        while read -r name val; do
            scale_record "scale.$topo.$peer.$name" "$val" -
        done <<<"$out"
    done
done
scale_record scale.plan.peer_count "$(wc -w <<<"$scale_peers")" peers

part="scale report"
echo
echo "The scale part took $((SECONDS - scale_started)) s (the whole run $SECONDS s)."
python3 bench/report.py --scale "$scale_raw" "$scale_cases" "$scale_peers" "$scale_sweep" \
    "$scale_peer_topos" || {
    echo "run.sh: FAILED: see the INVARIANT FAILED / MISSING lines above (raw figures:" \
        "$scale_raw)" >&2
    exit 1
}
fi # part 7
