#!/usr/bin/env bash
# Installs what the tests need (Debian packages) when it is missing, builds everything with CMake
# and runs the whole suite with CTest; then the suite again under AddressSanitizer and
# UndefinedBehaviorSanitizer, the CLI tests under valgrind, clang-tidy and cppcheck, the fuzzers,
# and the suite on 32-bit ARM Linux. Usage: ./scripts/test.sh [extra ctest arguments, applied to
# the host and ARM runs]
set -euo pipefail
cd "$(dirname "$0")/.."

# Needed for the suite itself; then the target toolchains and emulators, whose stages are skipped
# with a printed line when they cannot be installed.
required=(g++ clang cmake make pkg-config python3 redis-server redis-tools openssl liblwip-dev
    libmbedtls-dev clang-tidy cppcheck valgrind)
targets=(gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
    g++-arm-linux-gnueabihf qemu-system-arm qemu-user)

missing() {
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
    done
}
apt_install() {
    if [ "$(id -u)" -eq 0 ]; then
        sudo=()
    elif command -v sudo >/dev/null; then
        sudo=(sudo)
    else
        echo "test.sh: cannot install $* (no root, no sudo)" >&2
        return 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    if [ -z "${apt_updated:-}" ]; then
        "${sudo[@]}" apt-get update -qq && apt_updated=1
    fi
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
mapfile -t need < <(missing "${required[@]}")
if ((${#need[@]})); then
    echo "Installing missing packages: ${need[*]}"
    apt_install "${need[@]}"
fi
mapfile -t need < <(missing "${targets[@]}")
if ((${#need[@]})); then
    echo "Installing target toolchains and emulators: ${need[*]}"
    apt_install "${need[@]}" || echo "test.sh: could not install ${need[*]}; their stages will be skipped"
fi
# libFuzzer's runtime for the fuzz stage: Debian ships it per clang major version.
clang_major=$(clang --version | sed -n 's/.*clang version \([0-9][0-9]*\)\..*/\1/p' | head -n 1)
fuzzer_rt=libclang-rt-${clang_major}-dev
if [ -n "$(missing "$fuzzer_rt")" ]; then
    echo "Installing libFuzzer's runtime: $fuzzer_rt"
    apt_install "$fuzzer_rt"
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
cmake -S . -B build/cmake -DCMAKE_BUILD_TYPE=Debug -DRESPLOCK_WERROR=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
cmake --build build/cmake -j "$jobs"
ctest --test-dir build/cmake --output-on-failure -j "$jobs" "$@"
stage_done host

# g++ rather than clang: clang's -fsanitize=undefined includes `function`, whose runtime is C++ and
# is missing from tests/c's program, which the C compiler links; g++'s runtimes link from C too.
# Not run here: integration.test_noheap (it replaces malloc and operator new, as ASan does),
# build.makefile_* and package.* (they compile with their own flags), target.* (cross tools), and
# the soak test (long; it ran in the host stage).
stage "sanitizers: AddressSanitizer + UndefinedBehaviorSanitizer build (g++), suite again"
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CC=gcc CXX=g++ cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DRESPLOCK_WERROR=ON -DCMAKE_C_FLAGS="$sanitize" \
    -DCMAKE_CXX_FLAGS="$sanitize" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build build/asan -j "$jobs"
ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:print_stacktrace=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir build/asan --output-on-failure -j "$jobs" -LE soak \
    -E '^(build\.makefile_|package\.|target\.|soak\.)|^integration\.test_noheap$'
stage_done sanitizers

# Every resplock the CLI tests start runs under valgrind (a generated wrapper, see
# RESPLOCK_CLI_LAUNCHER in tests/CMakeLists.txt). Exit code 99 marks a valgrind finding: no
# resplock exit code, so the tests' exit-code checks fail on it. Only the cases whose timing
# margins survive valgrind's slower start run (RESPLOCK_CLI_SLOW_LAUNCHER lists them).
stage "valgrind: the CLI tests (plain and TLS) with resplock under valgrind"
cmake -S . -B build/valgrind -DCMAKE_BUILD_TYPE=Debug -DRESPLOCK_WERROR=ON -DRESPLOCK_CLI_SLOW_LAUNCHER=ON \
    "-DRESPLOCK_CLI_LAUNCHER=valgrind;--error-exitcode=99;--leak-check=full;--errors-for-leak-kinds=definite;-q"
cmake --build build/valgrind -j "$jobs" --target cli_slow_launcher_tests
ctest --test-dir build/valgrind --output-on-failure -j "$jobs" -L cli_slow_launcher
stage_done valgrind

stage "lint: clang-tidy (.clang-tidy) and cppcheck"
./scripts/lint.sh build/cmake
stage_done lint

stage "fuzz: libFuzzer, 60 s per target (scripts/fuzz.sh)"
./scripts/fuzz.sh 60
stage_done fuzz

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
    # The soak test runs once, on the host.
    ctest --test-dir build/arm-linux --output-on-failure -j "$jobs" -LE soak "$@"
    stage_done "32-bit ARM Linux"
fi
