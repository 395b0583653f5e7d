#!/usr/bin/env bash
# Installs what the tests need (Debian packages) when it is missing, builds everything with CMake
# and runs the whole suite with CTest. Usage: ./scripts/test.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ clang cmake make redis-server redis-tools)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "Installing missing packages: ${missing[*]}"
    if [ "$(id -u)" -eq 0 ]; then
        sudo=()
    elif command -v sudo >/dev/null; then
        sudo=(sudo)
    else
        echo "test.sh: missing packages (${missing[*]}) and no root or sudo to install them" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian starts a redis-server service on install; the tests start their own on free ports.

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build/cmake -DCMAKE_BUILD_TYPE=Debug
cmake --build build/cmake -j "$jobs"
ctest --test-dir build/cmake --output-on-failure -j "$jobs" "$@"
