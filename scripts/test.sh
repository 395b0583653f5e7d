#!/usr/bin/env bash
# Installs what the tests need (Debian packages) when it is missing, builds everything with CMake
# and runs the whole suite with CTest. Usage: ./scripts/test.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

# Needed for the suite itself; then the target toolchains and emulators, whose stages are skipped
# with a printed line when they cannot be installed.
required=(g++ clang cmake make pkg-config python3 redis-server redis-tools openssl liblwip-dev
    libmbedtls-dev)
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
# Debian starts a redis-server service on install; the tests start their own on free ports.

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build/cmake -DCMAKE_BUILD_TYPE=Debug
cmake --build build/cmake -j "$jobs"
ctest --test-dir build/cmake --output-on-failure -j "$jobs" "$@"

# The same suite on 32-bit ARM Linux: cross-built with cmake/toolchains/arm-linux-gnueabihf.cmake,
# every test binary run by qemu-arm (user-mode emulation); redis-server and the other helper
# programs are the host's. The Cortex-M4 checks already ran above, in the host suite (target.*).
echo "=== 32-bit ARM Linux: arm-linux-gnueabihf build, whole suite under qemu-arm ==="
if ! command -v arm-linux-gnueabihf-g++ >/dev/null || ! command -v qemu-arm >/dev/null ||
    [ ! -e /usr/arm-linux-gnueabihf/lib/ld-linux-armhf.so.3 ]; then
    echo "SKIPPED: 32-bit ARM Linux stage (g++-arm-linux-gnueabihf or qemu-user not installed)"
else
    arm_start=$SECONDS
    cmake -S . -B build/arm-linux -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-linux-gnueabihf.cmake
    cmake --build build/arm-linux -j "$jobs"
    ctest --test-dir build/arm-linux --output-on-failure -j "$jobs" "$@"
    echo "32-bit ARM Linux stage: $((SECONDS - arm_start)) s"
fi
