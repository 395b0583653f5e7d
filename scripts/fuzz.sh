#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz: the RESP parser; the lock, with and without acquisition
# options, and connection over the mock port; the quorum lock over several mock ports; the counting
# semaphore, plain and fair; the Cluster router's redirections; the Sentinel router's replies) with
# clang, AddressSanitizer and UndefinedBehaviorSanitizer, and runs each for SECONDS (default 60;
# fuzz_cluster and fuzz_sentinel at most 30: small surfaces), FUZZ_PARALLEL at a time (default:
# one per core), each on a scratch copy of the committed seed corpus. With --runs instead, each
# target runs a fixed number of inputs (`runs_of` below: about what 60 s, or 30, ran on a two-core
# x86-64 machine), however much CPU it gets: the same check whatever runs beside it.
#
#   scripts/fuzz.sh                         60 s per target
#   scripts/fuzz.sh --runs                  a fixed number of inputs per target (what
#                                           scripts/test.sh runs, beside a suite at nice 19)
#   scripts/fuzz.sh 3600                    a long run: an hour per target
#   FUZZ_TARGETS=fuzz_lock scripts/fuzz.sh 600    one target only
#   FUZZ_BUILD=/tmp/fuzz scripts/fuzz.sh    another build folder (default build/fuzz)
#   FUZZ_PARALLEL=1 scripts/fuzz.sh         one target at a time
#
# A crash, hang (over 5 s on one input), leak or broken invariant makes the script exit 1 and
# print where the input was saved (build/fuzz/artifacts/<target>/). Reproduce it with
#   build/fuzz/tests/fuzz/<target> build/fuzz/artifacts/<target>/crash-...
# (with RESPLOCK_FUZZ_TRACE=1, fuzz_lock, fuzz_quorum and fuzz_semaphore print each operation's
# status), and once fixed, keep it as a regression seed in tests/fuzz/corpus/<target without
# fuzz_>/.
#
# This script never changes the committed corpus. What a run found stays in
# build/fuzz/corpus/<target>/ until the next run; to add it, minimised, do so deliberately, e.g.
#   build/fuzz/tests/fuzz/fuzz_resp -merge=1 tests/fuzz/corpus/resp build/fuzz/corpus/fuzz_resp
#   build/fuzz/tests/fuzz/fuzz_lock -merge=1 tests/fuzz/corpus/lock build/fuzz/corpus/fuzz_lock
# (fuzz_quorum and fuzz_semaphore likewise, with tests/fuzz/corpus/quorum and .../semaphore),
# then review the new files (the corpus should stay a few dozen tiny files).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
fixed_runs=0
if [ "$seconds" = "--runs" ]; then
    fixed_runs=1
elif ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 [SECONDS | --runs]   (seconds per target, default 60; or a fixed number of" \
        "inputs per target)" >&2
    exit 64
fi
# Inputs per target with --runs: about what each ran in 60 s (fuzz_cluster and fuzz_sentinel: 30)
# on a two-core x86-64 machine, two targets at a time.
runs_of() {
    case "$1" in
    fuzz_resp) echo 2400000 ;;
    fuzz_lock | fuzz_sentinel) echo 1600000 ;;
    fuzz_quorum) echo 700000 ;;
    fuzz_semaphore) echo 1100000 ;;
    fuzz_cluster) echo 900000 ;;
    *) echo 1000000 ;;
    esac
}
targets=${FUZZ_TARGETS:-fuzz_resp fuzz_lock fuzz_quorum fuzz_semaphore fuzz_cluster fuzz_sentinel}
build=${FUZZ_BUILD:-build/fuzz}

for tool in clang clang++ cmake; do
    if ! command -v "$tool" >/dev/null; then
        echo "fuzz.sh: $tool not found (Debian: apt-get install clang cmake)" >&2
        exit 1
    fi
done
mkdir -p "$build"
# libFuzzer's runtime ships separately from the compiler on Debian: check that it links.
major=$(clang++ -dumpversion | cut -d. -f1)
probe_src="$build/probe.cpp"
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
    >"$probe_src"
if ! clang++ -fsanitize=fuzzer,address,undefined "$probe_src" -o "$build/probe" 2>"$build/probe.log"
then
    cat "$build/probe.log" >&2
    echo "fuzz.sh: clang $major cannot link libFuzzer; install its runtime:" \
        "apt-get install libclang-rt-$major-dev" >&2
    exit 1
fi

cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRESPLOCK_FUZZ=ON >"$build/configure.log" ||
    { cat "$build/configure.log" >&2; exit 1; }
# shellcheck disable=SC2086
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target $targets

# Runs one target; its summary line goes to $build/$t.result.
fuzz_one() {
    local t=$1 run_seconds=$seconds limit what
    if ((fixed_runs)); then
        # No time limit of its own, only a bound on a run that stalls: an hour.
        limit=(-runs="$(runs_of "$t")")
        what="$(runs_of "$t") inputs"
        run_seconds=3600
    else
        # fuzz_cluster and fuzz_sentinel cover one small unit each: 30 s at most is plenty.
        case "$t" in fuzz_cluster | fuzz_sentinel) [ "$seconds" -gt 30 ] && run_seconds=30 ;; esac
        limit=(-max_total_time="$run_seconds")
        what="${run_seconds} s"
    fi
    local seeds=tests/fuzz/corpus/${t#fuzz_}
    local corpus=$build/corpus/$t
    local artifacts=$build/artifacts/$t
    local log=$build/$t.log
    rm -rf "$corpus" "$artifacts"
    mkdir -p "$corpus" "$artifacts"
    cp "$seeds"/* "$corpus"/
    echo "=== $t: $what on $(find "$corpus" -type f | wc -l) seed inputs (log: $log)"
    local status=0
    # One process per target (no -jobs); the outer timeout only guards against libFuzzer
    # itself wedging.
    timeout $((run_seconds + 300)) "$build/tests/fuzz/$t" "${limit[@]}" -timeout=5 \
        -rss_limit_mb=1024 -print_final_stats=1 -dict=tests/fuzz/resp.dict \
        -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1 || status=$?
    local last execs rate found
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    found=$(find "$corpus" -type f | wc -l)
    if [ "$status" -ne 0 ]; then
        {
            tail -n 40 "$log"
            echo "FAILED: $t exited with $status; input(s) saved:"
            find "$artifacts" -type f -printf '  %p\n'
        } >&2
        echo "$t: FAILED (exit $status)" >"$build/$t.result"
        return 1
    fi
    echo "$t: ${execs:-?} runs, ${rate:-?} exec/s, corpus $found files; $last" >"$build/$t.result"
}

# FUZZ_PARALLEL targets at a time (default: one per core), each a single process.
parallel=${FUZZ_PARALLEL:-$(nproc 2>/dev/null || echo 2)}
failed=0
running=0
for t in $targets; do
    rm -f "$build/$t.result"
    fuzz_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$parallel" ]; then
        wait -n || failed=1
        running=$((running - 1))
    fi
done
while [ "$running" -gt 0 ]; do
    wait -n || failed=1
    running=$((running - 1))
done
summary=()
for t in $targets; do
    summary+=("$(cat "$build/$t.result" 2>/dev/null || echo "$t: FAILED (no result)")")
    grep -q FAILED "$build/$t.result" 2>/dev/null && failed=1
done
if ((fixed_runs)); then
    echo "=== fuzz summary (a fixed number of inputs per target)"
else
    echo "=== fuzz summary (${seconds} s per target, fuzz_cluster and fuzz_sentinel at most 30)"
fi
printf '%s\n' "${summary[@]}"
exit "$failed"
