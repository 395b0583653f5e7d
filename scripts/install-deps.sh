#!/usr/bin/env bash
# Installs the Debian packages a job needs, when missing: the one place that knows them, for
# scripts/demo.sh, scripts/test.sh and bench/run.sh. Runs apt-get (update first) as root or
# through sudo.
#   scripts/install-deps.sh GROUP...      exits non-zero when a package cannot be installed
#   scripts/install-deps.sh --optional GROUP...   says so and exits 0 instead
# Groups:
#   demo     compiler, build tools and Redis: the tool and a throwaway server
#   test     everything the host test suite, the coverage gate (gcovr), the sanitizer, valgrind
#            and lint stages use (groff and man for the man page, zsh for its completion, systemd
#            for systemd-analyze verify, dpkg-dev and lintian for the .deb)
#   fuzz     libFuzzer's runtime for the installed clang
#   targets  the Cortex-M and 32-bit ARM Linux toolchains and their emulators, musl-tools (the
#            static tool, scripts/static.sh) and dpkg-dev (apt-get source: the board firmware's
#            lwIP and mbedTLS, and the static tool's musl and mbedTLS, come from Debian's sources)
#   bench    hiredis (the baseline client), valgrind and binutils
set -euo pipefail

optional=0
if [ "${1:-}" = "--optional" ]; then
    optional=1
    shift
fi
packages=()
for group in "$@"; do
    case "$group" in
    demo) packages+=(g++ cmake make redis-server redis-tools) ;;
    test)
        packages+=(g++ clang cmake make pkg-config python3 redis-server redis-tools openssl
            liblwip-dev libmbedtls-dev clang-tidy clang-format cppcheck valgrind util-linux
            groff-base man-db zsh systemd dpkg-dev lintian gcovr)
        ;;
    fuzz)
        major=$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9][0-9]*\)\..*/\1/p' |
            head -n 1)
        [ -n "$major" ] && packages+=("libclang-rt-$major-dev")
        ;;
    targets)
        packages+=(gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
            g++-arm-linux-gnueabihf qemu-system-arm qemu-user musl-tools dpkg-dev)
        ;;
    bench) packages+=(g++ cmake make pkg-config python3 binutils redis-server redis-tools
        valgrind libhiredis-dev) ;;
    *)
        echo "install-deps.sh: unknown group '$group' (demo, test, fuzz, targets, bench)" >&2
        exit 64
        ;;
    esac
done

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$p")
done
((${#missing[@]})) || exit 0

give_up() {
    echo "install-deps.sh: $1" >&2
    if ((optional)); then exit 0; fi
    exit 1
}
command -v apt-get >/dev/null || give_up "no apt-get: install ${missing[*]} yourself"
if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null; then
    as_root=(sudo)
else
    give_up "not root and no sudo: cannot install ${missing[*]}"
fi
echo "Installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq || give_up "apt-get update failed"
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    give_up "could not install ${missing[*]}"
