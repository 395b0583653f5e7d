#!/usr/bin/env bash
# The builds a consumer may choose, with warnings as errors: every CMake build type (Release,
# MinSizeRel, RelWithDebInfo, Debug) with g++ and with clang++, each with the mbedTLS transport
# and without it. Only the libraries and the tool are built (no tests): this checks that each
# combination of optimiser and compiler compiles warning-free, which the test builds (Debug) alone
# cannot show (e.g. -Wformat-truncation needs the optimiser's value ranges).
#   scripts/build-matrix.sh [BUILD_ROOT]    default build/matrix; one folder per compiler and type
# One folder per compiler and build type is configured and built with mbedTLS, then reconfigured
# without it and built again: only what depends on mbedTLS (the tool's units) is rebuilt. The
# folders are built side by side, one per core. Exits non-zero when any build fails, printing
# the end of that build's log.
# Two more builds check the C API against config.h's limits: one with raised limits, one with
# lowered ones, each passed with -D in CMAKE_C_FLAGS and CMAKE_CXX_FLAGS so that the library and
# the C programs see the same values. Each builds the library and the C API tests only (Debug,
# g++, no mbedTLS, not the tool), checks that every compile command carries the limits, and runs
# the C API tests (ctest -R '^c\.', against redis-servers the tests start themselves).
set -euo pipefail
cd "$(dirname "$0")/.."

root=${1:-build/matrix}
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p "$root"

# compiler-pair build-type: configure and build twice, the log in $root/<name>.log.
one() {
    local cc=$1 cxx=$2 type=$3
    local dir=$root/$cxx-$type
    local log=$dir.log
    local mbedtls
    : >"$log"
    for mbedtls in ON OFF; do
        echo "--- $cxx $type mbedTLS $mbedtls" >>"$log"
        if ! cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DCMAKE_C_COMPILER="$cc" \
            -DCMAKE_CXX_COMPILER="$cxx" -DRESPLOCK_WERROR=ON -DRESPLOCK_BUILD_TESTS=OFF \
            -DRESPLOCK_BUILD_TOOLS=ON -DRESPLOCK_WITH_MBEDTLS="$mbedtls" >>"$log" 2>&1 ||
            ! cmake --build "$dir" -j 1 >>"$log" 2>&1; then
            echo "FAILED: $cxx $type mbedTLS $mbedtls (log: $log), its end:"
            tail -n 30 "$log"
            return 1
        fi
        # The build must really be the one asked for.
        if ! grep -q "^RESPLOCK_WITH_MBEDTLS:BOOL=$mbedtls$" "$dir/CMakeCache.txt"; then
            echo "FAILED: $cxx $type: RESPLOCK_WITH_MBEDTLS is not $mbedtls"
            return 1
        fi
    done
    echo "ok: $cxx $type (mbedTLS on and off)"
}

# The C API's storage sizes follow config.h's limits (include/resplock/c_api/lock.h): every
# limit that sizes an object raised (most of them to config.h's largest value) ...
declare -A limit_flags
limit_flags[raised]="-DRESPLOCK_MAX_KEY_LEN=256 -DRESPLOCK_MAX_REPLY_VALUES=16 -DRESPLOCK_MAX_DEPTH=16 \
-DRESPLOCK_MAX_OWNER_LEN=64 -DRESPLOCK_MAX_SERVERS=15 -DRESPLOCK_MAX_RENEWED=8 \
-DRESPLOCK_MAX_HOST_LEN=255 -DRESPLOCK_MAX_SENTINELS=15 -DRESPLOCK_MAX_REDIRECTS=16 \
-DRESPLOCK_MAX_ARRAY_ELEMENTS=64"
# ... and lowered: config.h's smallest values where the C API tests still run (a host name of an
# IPv4 address, one renewed lock), small ones elsewhere (the tests' keys and owner label, three
# quorum servers, the replies and nesting of ROLE and SENTINEL, three sentinels).
limit_flags[lowered]="-DRESPLOCK_MAX_KEY_LEN=32 -DRESPLOCK_MAX_REPLY_VALUES=4 -DRESPLOCK_MAX_DEPTH=3 \
-DRESPLOCK_MAX_OWNER_LEN=8 -DRESPLOCK_MAX_SERVERS=3 -DRESPLOCK_MAX_RENEWED=1 \
-DRESPLOCK_MAX_HOST_LEN=15 -DRESPLOCK_MAX_SENTINELS=3 -DRESPLOCK_MAX_REDIRECTS=2 \
-DRESPLOCK_MAX_ARRAY_ELEMENTS=4"

# limits NAME FLAGS: the library and the C API tests with these -D limits, then those tests.
limits() {
    local name=$1 flags=$2
    local dir=$root/limits-$name
    local log=$dir.log
    local targets=(with_redis) src flag
    for src in tests/c/test_c_*.c; do
        src=${src##*/}
        targets+=("${src%.c}")
    done
    : >"$log"
    echo "--- limits $name: $flags" >>"$log"
    if ! cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=gcc \
        -DCMAKE_CXX_COMPILER=g++ -DRESPLOCK_WERROR=ON -DRESPLOCK_BUILD_TESTS=ON \
        -DRESPLOCK_BUILD_TOOLS=ON -DRESPLOCK_WITH_MBEDTLS=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
        -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" >>"$log" 2>&1 ||
        ! cmake --build "$dir" -j 1 --target "${targets[@]}" >>"$log" 2>&1; then
        echo "FAILED: limits $name (log: $log), its end:"
        tail -n 30 "$log"
        return 1
    fi
    # The library and the C programs must see the same limits: every compile command has them.
    local commands
    commands=$(grep -c '"command":' "$dir/compile_commands.json")
    for flag in $flags; do
        if (($(grep '"command":' "$dir/compile_commands.json" | grep -cF -- "$flag ") != commands)); then
            echo "FAILED: limits $name: a compile command lacks $flag"
            return 1
        fi
    done
    if ! ctest --test-dir "$dir" -R '^c\.' --output-on-failure >>"$log" 2>&1; then
        echo "FAILED: limits $name: C API tests (log: $log), its end:"
        tail -n 30 "$log"
        return 1
    fi
    echo "ok: limits $name (library and C API tests)"
}

combos=()
for pair in gcc:g++ clang:clang++; do
    if ! command -v "${pair#*:}" >/dev/null || ! command -v "${pair%:*}" >/dev/null; then
        echo "build-matrix.sh: ${pair#*:} not found" >&2
        exit 1
    fi
    for type in Release MinSizeRel RelWithDebInfo Debug; do
        combos+=("${pair%:*} ${pair#*:} $type")
    done
done

combos+=("limits raised" "limits lowered")

start=$SECONDS
failed=0
running=0
for combo in "${combos[@]}"; do
    if ((running >= jobs)); then
        wait -n || failed=1
        running=$((running - 1))
    fi
    if [[ $combo == limits\ * ]]; then
        name=${combo#limits }
        limits "$name" "${limit_flags[$name]}" &
    else
        # shellcheck disable=SC2086 # three words on purpose
        one $combo &
    fi
    running=$((running + 1))
done
while ((running > 0)); do
    wait -n || failed=1
    running=$((running - 1))
done

if ((failed)); then
    echo "build-matrix.sh: some builds failed"
    exit 1
fi
echo "build-matrix.sh: $((${#combos[@]} - 2)) compiler/type pairs x mbedTLS on/off built," \
    "C API raised and lowered limits built and tested, $((SECONDS - start)) s"
