#!/usr/bin/env bash
# The whole test suite, the command the README gives and .ci/run calls. Installs what it needs
# (Debian packages, scripts/install-deps.sh), builds everything with CMake (warnings as errors)
# and runs the suite with CTest; then every build type with g++ and clang++, with and without
# mbedTLS (scripts/build-matrix.sh), the suite again under AddressSanitizer and
# UndefinedBehaviorSanitizer, the CLI tests under valgrind, clang-tidy, cppcheck and
# clang-format, the fuzzers, the benchmark's short run (its invariants, not its timings), and the
# suite on 32-bit ARM Linux.
#   ./scripts/test.sh [CTEST ARGS...]          everything (extra arguments go to the host and ARM
#                                              ctest runs, e.g. -R cli)
#   ./scripts/test.sh --quick [CTEST ARGS...]  the host build and host suite only, for iteration
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
# Debian starts a redis-server service on install; the tests start their own on free ports.

jobs=$(nproc 2>/dev/null || echo 2)
stage() {
    echo "=== $* ==="
    stage_start=$SECONDS
}
stage_done() {
    echo "$1 stage: $((SECONDS - stage_start)) s"
}

# The host build also writes compile_commands.json for clang-tidy in the lint stage.
stage "host: build everything, run the whole suite"
cmake -S . -B build/cmake -DCMAKE_BUILD_TYPE=Debug -DRESPLOCK_WERROR=ON \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
cmake --build build/cmake -j "$jobs"
ctest --test-dir build/cmake --output-on-failure -j "$jobs" "$@"
stage_done host
if ((quick)); then
    exit 0
fi

# Every build type with g++ and clang++, with and without mbedTLS: the library and the tool only,
# warnings as errors (the optimiser finds warnings that the Debug build above cannot).
stage "build matrix: {Release, MinSizeRel, RelWithDebInfo, Debug} x {g++, clang++} x mbedTLS on/off"
./scripts/build-matrix.sh build/matrix
stage_done "build matrix"

# g++ rather than clang: clang's -fsanitize=undefined includes `function`, whose runtime is C++ and
# is missing from tests/c's program, which the C compiler links; g++'s runtimes link from C too.
# Not run here: integration.test_noheap (it replaces malloc and operator new, as ASan does),
# build.makefile_* and package.* (they compile with their own flags), target.* (cross tools), and
# the soak test and the trial (long, with timing bounds meant for the plain build; they ran in the
# host stage).
stage "sanitizers: AddressSanitizer + UndefinedBehaviorSanitizer build (g++), suite again"
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CC=gcc CXX=g++ cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DRESPLOCK_WERROR=ON \
    -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_CXX_FLAGS="$sanitize" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build build/asan -j "$jobs"
ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:print_stacktrace=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir build/asan --output-on-failure -j "$jobs" -LE soak \
    -E '^(build\.makefile_|package\.|target\.|soak\.|trial\.(short|self_test)$)|^integration\.test_noheap$'
stage_done sanitizers

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

stage "lint: clang-tidy (.clang-tidy), cppcheck and clang-format (.clang-format)"
./scripts/lint.sh build/cmake
stage_done lint

stage "fuzz: libFuzzer, 60 s per target (scripts/fuzz.sh)"
./scripts/fuzz.sh 60
stage_done fuzz

stage "benchmark: a short run of bench/run.sh, checking its invariants (not its timings)"
./bench/run.sh --quick
stage_done benchmark

# The same suite on 32-bit ARM Linux: cross-built with cmake/toolchains/arm-linux-gnueabihf.cmake,
# every test binary run by qemu-arm (user-mode emulation); redis-server and the other helper
# programs are the host's. The Cortex-M4 checks already ran above, in the host suite (target.*).
stage "32-bit ARM Linux: arm-linux-gnueabihf build, whole suite under qemu-arm"
if ! command -v arm-linux-gnueabihf-g++ >/dev/null || ! command -v qemu-arm >/dev/null ||
    [ ! -e /usr/arm-linux-gnueabihf/lib/ld-linux-armhf.so.3 ]; then
    echo "SKIPPED: 32-bit ARM Linux stage (g++-arm-linux-gnueabihf or qemu-user not installed)"
else
    cmake -S . -B build/arm-linux -DCMAKE_BUILD_TYPE=Debug -DRESPLOCK_WERROR=ON \
        -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-linux-gnueabihf.cmake
    cmake --build build/arm-linux -j "$jobs"
    # The soak test runs once, on the host. The bounded proofs whose code depends on the word
    # size (the parser's, the encoder's, the companion names') run here too (a 32-bit size_t);
    # the parser's with limits at 1 and the time arithmetic's (a 32-bit clock on every target)
    # ran on the host and under the sanitizers, and would take 3 more minutes under qemu-arm.
    ctest --test-dir build/arm-linux --output-on-failure -j "$jobs" -LE soak \
        -E '^proof\.(resp_parser_limits_1|time)$' "$@"
    stage_done "32-bit ARM Linux"
fi
