#!/usr/bin/env bash
# The whole test suite, the command the README gives and .ci/run calls. Installs what it needs
# (Debian packages, scripts/install-deps.sh), builds everything with CMake (warnings as errors)
# and runs the suite with CTest, while every build type with g++ and clang++, with and without
# mbedTLS (scripts/build-matrix.sh), and the builds of the later stages are compiled beside it;
# then the suite again under AddressSanitizer and UndefinedBehaviorSanitizer, with clang-tidy,
# cppcheck and clang-format beside it; the CLI tests under valgrind, the benchmark's short run (its
# invariants, not its timings) and the suite on 32-bit ARM Linux, with the fuzzers beside them.
#   ./scripts/test.sh [CTEST ARGS...]          everything (extra arguments go to the host and ARM
#                                              ctest runs, e.g. -R cli)
#   ./scripts/test.sh --quick [CTEST ARGS...]  the host build and the host suite without its
#                                              slow parts (see `quick_skips` below), for iteration
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
if [ "${1:-}" = "--quick" ]; then
    quick=1
    shift
fi

./scripts/install-deps.sh test
if ((!quick)); then
    ./scripts/install-deps.sh fuzz
    # The target stages are skipped, with a printed line, when their tools cannot be installed.
    ./scripts/install-deps.sh --optional targets
fi
# The installation of what was missing (nothing, after a first run), apart from the stages' times.
echo "packages: $SECONDS s"
# Debian starts a redis-server service on install; the tests start their own on free ports.

jobs=$(nproc 2>/dev/null || echo 2)
# CTest runs four tests per core: most tests wait (on servers, timers, child processes) and
# overlap. One that computes holds one of the resource spec's `cores` (one per core: COMPUTES in
# tests/CMakeLists.txt), so that no more of them run at once than there are cores.
slots=$((4 * jobs))
mkdir -p build
printf '{"version": {"major": 1, "minor": 0}, "local": [{"cores": [{"id": "0", "slots": %d}]}]}\n' \
    "$jobs" >build/cores.json
ctest_args=(--output-on-failure --resource-spec-file "$PWD/build/cores.json")
# What --quick leaves out: the builds with other toolchains and of the packages (static.*,
# target.*, board.*, package.*, build.makefile_*), the fault trial and the soak (trial.*, soak.*),
# the bounded proofs (proof.*) and the documentation's commands (docs.commands); the coverage gate
# too, which judges whole runs only.
quick_skips='^(static|target|board|package|build|trial|soak|proof)\.|^docs\.commands$'
stage() {
    echo "=== $* ==="
    stage_start=$SECONDS
}
stage_done() {
    echo "$1 stage: $((SECONDS - stage_start)) s"
}
# Work that only computes (compiling, static analysis, fuzzing) runs beside a suite at the lowest
# priority (nice 19): it takes the CPU that the suite's tests leave idle while they wait on
# servers, timers and child processes, and the suite's timing-bound tests keep theirs. Its output
# goes to build/<name>.log, printed when it is awaited; its failure fails the run then.
declare -A side_pid side_start
side() {
    local name=$1
    shift
    mkdir -p build
    echo "=== $name: started beside what follows, at nice 19 (build/$name.log) ==="
    # A session of its own (setsid), so that a run that stops early can stop all of it. Where the
    # kernel groups each session's processes for the scheduler (autogroup), a nice value counts
    # only inside the group: the group's own nice value is set too.
    setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec nice -n 19 "$@"' side "$@" \
        >"build/$name.log" 2>&1 &
    side_pid[$name]=$!
    side_start[$name]=$SECONDS
}
side_done() {
    local name=$1 status=0
    wait "${side_pid[$name]}" || status=$?
    unset "side_pid[$name]"
    echo "=== $name (ran beside the stages above) ==="
    cat "build/$name.log"
    echo "$name stage: $((SECONDS - side_start[$name])) s, beside the stages above"
    return "$status"
}
# A run that stops early stops what runs beside it too.
stop_sides() {
    local p
    for p in "${side_pid[@]}"; do
        kill -- "-$p" 2>/dev/null || true
    done
}
trap stop_sides EXIT

# Builds that only compile run beside the host suite (at nice 19, see side()): the sanitizer build
# and the 32-bit ARM cross build, each with the flags its stage below names.
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
build_asan() {
    CC=gcc CXX=g++ cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DRESPLOCK_WERROR=ON \
        -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_CXX_FLAGS="$sanitize" \
        -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" &&
        cmake --build build/asan -j "$jobs"
}
build_arm_linux() {
    cmake -S . -B build/arm-linux -DCMAKE_BUILD_TYPE=Debug -DRESPLOCK_WERROR=ON \
        -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-linux-gnueabihf.cmake &&
        cmake --build build/arm-linux -j "$jobs"
}
export sanitize jobs
export -f build_asan build_arm_linux
arm_linux=1
if ! command -v arm-linux-gnueabihf-g++ >/dev/null || ! command -v qemu-arm >/dev/null ||
    [ ! -e /usr/arm-linux-gnueabihf/lib/ld-linux-armhf.so.3 ]; then
    arm_linux=0
fi
# A later suite starts its tests in the order of the host suite's measured times (CTest's cost
# data, by test name), longest first, so that the longest do not start last.
cost_data=Testing/Temporary/CTestCostData.txt
with_host_costs() {
    mkdir -p "$1/${cost_data%/*}"
    cp build/cmake/$cost_data "$1/$cost_data" 2>/dev/null || true
}

# The host build also writes compile_commands.json for clang-tidy in the lint stage, and its
# library and ports record their coverage for the gate after the suite (scripts/coverage.sh).
if ((quick)); then
    stage "host: build everything, run the suite without its slow parts (--quick)"
else
    stage "host: build everything, run the whole suite, coverage gate"
fi
cmake -S . -B build/cmake -DCMAKE_BUILD_TYPE=Debug -DRESPLOCK_WERROR=ON \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DRESPLOCK_COVERAGE=ON
cmake --build build/cmake -j "$jobs"
if ((!quick)); then
    # Every build type with g++ and clang++, with and without mbedTLS: the library and the tool
    # only, warnings as errors (the optimiser finds warnings that the Debug build above cannot).
    side "build-matrix" ./scripts/build-matrix.sh build/matrix
    side "asan-build" bash -c build_asan
    if ((arm_linux)); then
        side "arm-linux-build" bash -c build_arm_linux
    fi
fi
# Counts from an earlier run would add to this one's.
find build/cmake -name '*.gcda' -delete
if ((quick)); then
    ctest --test-dir build/cmake "${ctest_args[@]}" -j "$slots" -E "$quick_skips" "$@"
else
    ctest --test-dir build/cmake "${ctest_args[@]}" -j "$slots" "$@"
fi
# Lines and branches of the library and ports the suite ran (docs/testing.md, "Coverage"); a run
# of part of the suite covers less by construction, so the gate judges whole runs only.
if ((quick)); then
    echo "coverage gate: skipped (--quick runs part of the suite)"
elif (($#)); then
    echo "coverage gate: skipped (ctest ran with arguments: $*)"
else
    coverage_start=$SECONDS
    ./scripts/coverage.sh build/cmake
    echo "coverage gate: $((SECONDS - coverage_start)) s"
fi
stage_done host
if ((quick)); then
    echo "test.sh: --quick passed, $SECONDS s in all"
    exit 0
fi
side_done "build-matrix"

# g++ rather than clang: clang's -fsanitize=undefined includes `function`, whose runtime is C++ and
# is missing from tests/c's program, which the C compiler links; g++'s runtimes link from C too.
# Not run here: integration.test_noheap (it replaces malloc and operator new, as ASan does),
# build.makefile_* and package.* (they compile with their own flags), target.* (cross tools), and
# the soak test and the trial (long, with timing bounds meant for the plain build; they ran in the
# host stage).
stage "sanitizers: AddressSanitizer + UndefinedBehaviorSanitizer build (g++), suite again"
side_done "asan-build"
# clang-tidy, cppcheck and clang-format (the host build's compile_commands.json) beside the suite.
# Two tests per core here, as on 32-bit ARM below: the sanitizers make every test compute more,
# and four per core tripped a timing bound (integration.test_lock's 150 ms for an acquisition).
side "lint" ./scripts/lint.sh build/cmake
with_host_costs build/asan
ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:print_stacktrace=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir build/asan "${ctest_args[@]}" -j "$((2 * jobs))" -LE soak \
    -E '^(build\.makefile_|package\.|target\.|soak\.|trial\.(short\..*|self_test)$)|^integration\.test_noheap$'
stage_done sanitizers
side_done "lint"

# The fuzzers compute only: they run beside the stages up to the end, a fixed number of inputs per
# target (scripts/fuzz.sh --runs), so that what they check does not depend on the CPU left to them.
side "fuzz" ./scripts/fuzz.sh --runs

# Every resplock the CLI tests start runs under valgrind (a generated wrapper, see
# RESPLOCK_CLI_LAUNCHER in tests/CMakeLists.txt). Exit code 99 marks a valgrind finding: no
# resplock exit code, so the tests' exit-code checks fail on it. Only the cases whose timing
# margins survive valgrind's slower start run (RESPLOCK_CLI_SLOW_LAUNCHER).
stage "valgrind: the CLI tests (plain and TLS) with resplock under valgrind"
cmake -S . -B build/valgrind -DCMAKE_BUILD_TYPE=Debug -DRESPLOCK_WERROR=ON \
    -DRESPLOCK_CLI_SLOW_LAUNCHER=ON \
    "-DRESPLOCK_CLI_LAUNCHER=valgrind;--error-exitcode=99;--leak-check=full;--errors-for-leak-kinds=definite;-q"
cmake --build build/valgrind -j "$jobs" --target cli_slow_launcher_tests
ctest --test-dir build/valgrind --output-on-failure -j "$jobs" -L cli_slow_launcher
stage_done valgrind

stage "benchmark: a short run of bench/run.sh, checking its invariants (not its timings)"
./bench/run.sh --quick
stage_done benchmark

# The same suite on 32-bit ARM Linux: cross-built with cmake/toolchains/arm-linux-gnueabihf.cmake
# (beside the host suite), every test binary run by qemu-arm (user-mode emulation); redis-server
# and the other helper programs are the host's. The Cortex-M4 checks already ran above, in the
# host suite (target.*).
stage "32-bit ARM Linux: arm-linux-gnueabihf build, whole suite under qemu-arm"
if ((!arm_linux)); then
    echo "SKIPPED: 32-bit ARM Linux stage (g++-arm-linux-gnueabihf or qemu-user not installed)"
else
    side_done "arm-linux-build"
    with_host_costs build/arm-linux
    # The soak test runs once, on the host. The bounded proofs whose code depends on the word
    # size (the parser's, the encoder's, the companion names') run here too (a 32-bit size_t);
    # the parser's with limits at 1 and the time arithmetic's (a 32-bit clock on every target)
    # ran on the host and under the sanitizers, and would take 3 more minutes under qemu-arm. The
    # Cortex-M package checks build with arm-none-eabi whatever the host is: they ran on the host.
    # Two tests per core here: under qemu-arm every test computes much of the time it waits
    # elsewhere, and four per core tripped the timing bounds of two.
    ctest --test-dir build/arm-linux "${ctest_args[@]}" -j "$((2 * jobs))" -LE soak \
        -E '^proof\.(resp_parser_limits_1|time)$|^package\.(toolchains_cortex_m|firmware_cortex_m4)$' \
        "$@"
    stage_done "32-bit ARM Linux"
fi
side_done "fuzz"
echo "test.sh: every stage passed, $SECONDS s in all"
