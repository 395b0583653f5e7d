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

start=$SECONDS
failed=0
running=0
for combo in "${combos[@]}"; do
    if ((running >= jobs)); then
        wait -n || failed=1
        running=$((running - 1))
    fi
    # shellcheck disable=SC2086 # three words on purpose
    one $combo &
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
echo "build-matrix.sh: ${#combos[@]} compiler/type pairs x mbedTLS on/off built, $((SECONDS - start)) s"
