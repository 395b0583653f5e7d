#!/usr/bin/env bash
# Builds the resplock tool as fully static executables with musl libc: no shared library, no
# program interpreter, so one file runs on any Linux of its architecture, whatever its libc.
#   scripts/static.sh [OUT]      default build/static
# Leaves in OUT, stripped:
#   resplock-x86_64              x86-64, with TLS (rediss://)
#   resplock-x86_64-notls        x86-64, without TLS
#   resplock-armhf               32-bit ARM (hard float, ARMv7), with TLS
# and prints the size of each. Exits 77 with a SKIPPED line when a tool is missing
# (scripts/install-deps.sh test targets; musl-tools is in targets) or Debian's sources cannot be
# fetched.
#
# How: x86-64 uses Debian's musl (musl-tools: musl-gcc.specs). Debian ships no musl for 32-bit
# ARM cross builds, so musl is built from Debian's musl source package with
# arm-linux-gnueabihf-gcc. mbedTLS (TLS) is built for each from Debian's mbedtls source package,
# library only, -Os, its default configuration (Debian's libmbedtls-dev archives are glibc
# builds). Sources are fetched by tests/board/fetch-source.sh into OUT/src, never into the
# repository. The tool itself is the Makefile's (`make STATIC=1 TLS=1 ...`, the project's warnings
# with -Werror): g++ compiles it against musl's headers and libstdc++'s headers only; it is
# linked by gcc with musl's crt and libc.a and no C++ runtime, which it does not need (built with
# -fno-exceptions -fno-rtti -fno-threadsafe-statics). A run again rebuilds only what changed.
# JOBS (default: the number of cores) sets the parallel jobs of each step.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

out=${1:-build/static}
mkdir -p "$out"
out=$(cd "$out" && pwd)
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
x86_specs=/usr/lib/x86_64-linux-musl/musl-gcc.specs
arm="arm-linux-gnueabihf"

skip() {
    echo "SKIPPED: $1"
    exit 77
}
for tool in g++ gcc make cmake strip file readelf $arm-gcc $arm-g++ $arm-strip; do
    command -v "$tool" >/dev/null 2>&1 ||
        skip "$tool not installed (scripts/install-deps.sh test targets)"
done
[ -f "$x86_specs" ] || skip "musl-gcc not installed (scripts/install-deps.sh targets: musl-tools)"

for pkg in musl mbedtls; do
    sh tests/board/fetch-source.sh "$pkg" "$out/src" || exit $?
done

# The C++ compiler's libstdc++ header folders (the ones under c++/), as -isystem options: musl's
# specs drop every default include folder.
cxx_includes() {
    echo | "$1" -xc++ -E -v - 2>&1 | sed -n '/^#include <...>/,/^End of search/p' |
        awk '/\/c\+\+\// { printf " -isystem %s", $1 }'
}

# musl for 32-bit ARM, installed in $out/armhf/musl (headers, crt, libc.a and musl-gcc.specs).
arm_musl=$out/armhf/musl
if [ ! -f "$arm_musl/lib/libc.a" ] || [ ! -f "$arm_musl/lib/musl-gcc.specs" ]; then
    echo "== musl for $arm"
    rm -rf "$out/armhf/musl-build" && mkdir -p "$out/armhf/musl-build"
    (
        cd "$out/armhf/musl-build"
        "$out/src/musl/configure" --target=$arm CROSS_COMPILE=$arm- CC=$arm-gcc CFLAGS=-Os \
            --prefix="$arm_musl" --disable-shared --enable-wrapper=gcc >configure.log 2>&1 &&
            make -j "$jobs" >make.log 2>&1 && make install >install.log 2>&1
    ) || {
        tail -n 30 "$out/armhf/musl-build/"*.log
        exit 1
    }
fi

# mbedTLS (library only, -Os, default configuration) with C compiler $2, installed in $1.
mbedtls() {
    local prefix=$1 cc=$2 specs=$3
    shift 3
    [ -f "$prefix/lib/libmbedcrypto.a" ] && return 0
    echo "== mbedTLS for $(basename "$(dirname "$prefix")")"
    local build=$prefix-build
    rm -rf "$build" && mkdir -p "$build"
    local cflags="-specs=$specs -ffunction-sections -fdata-sections"  # MinSizeRel adds -Os
    if ! { cmake -S "$out/src/mbedtls" -B "$build" -DCMAKE_BUILD_TYPE=MinSizeRel \
        -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" \
        -DCMAKE_INSTALL_PREFIX="$prefix" -DENABLE_PROGRAMS=OFF -DENABLE_TESTING=OFF \
        -DUSE_SHARED_MBEDTLS_LIBRARY=OFF -DMBEDTLS_FATAL_WARNINGS=OFF -DGEN_FILES=OFF "$@" &&
        cmake --build "$build" -j "$jobs" && cmake --install "$build"; } >"$build.log" 2>&1; then
        tail -n 30 "$build.log"
        exit 1
    fi
}
mbedtls "$out/x86_64/mbedtls" gcc "$x86_specs"
mbedtls "$out/armhf/mbedtls" $arm-gcc "$arm_musl/lib/musl-gcc.specs" \
    -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=arm

# The tool: folder name, g++, gcc, musl's specs, strip, TLS (0/1).
tool() {
    local name=$1 cxx=$2 cc=$3 specs=$4 strip=$5 tls=$6 arch=${1%%-*}
    local build=$out/$name
    # libstdc++'s <bits/os_defines.h> asks glibc's __GLIBC_PREREQ, which musl has not.
    local cxxflags
    cxxflags="$(cxx_includes "$cxx") '-D__GLIBC_PREREQ(maj,min)=0' -Os"
    cxxflags+=" -fno-threadsafe-statics -ffunction-sections -fdata-sections"
    echo "== resplock $name"
    make -s -j "$jobs" WERROR=1 STATIC=1 TLS="$tls" MBEDTLS_DIR="$out/$arch/mbedtls" \
        BUILD="$build" CXX="$cxx -specs=$specs" CC="$cc -specs=$specs" LINK="$cc -specs=$specs" \
        AR="${strip%strip}ar" CXXFLAGS="$cxxflags" \
        CFLAGS="-Os -ffunction-sections -fdata-sections" LDFLAGS="-Wl,--gc-sections" cli
    "$strip" -o "$out/resplock-$name" "$build/resplock"
    # Fully static: no program interpreter, no dynamic section, no C++ runtime.
    local what
    what=$(file -b "$out/resplock-$name")
    case "$what" in
    *"statically linked"*) ;;
    *) echo "FAILED: resplock-$name is not statically linked: $what" && exit 1 ;;
    esac
    if readelf -lW "$out/resplock-$name" | grep -Eq 'INTERP|DYNAMIC'; then
        echo "FAILED: resplock-$name has a program interpreter or a dynamic section" && exit 1
    fi
}
cd "$root"
tool x86_64 g++ gcc "$x86_specs" strip 1
# The library's objects do not depend on TLS (only the tool's own do): the build without TLS
# starts from the ones just made, with their times, so make compiles only the tool's objects.
mkdir -p "$out/x86_64-notls/obj/ports"
cp -a "$out/x86_64/include" "$out/x86_64/libresplock.a" "$out/x86_64-notls/"
cp -a "$out/x86_64/obj/src" "$out/x86_64-notls/obj/"
cp -a "$out/x86_64/obj/ports/posix" "$out/x86_64-notls/obj/ports/"
tool x86_64-notls g++ gcc "$x86_specs" strip 0
tool armhf $arm-g++ $arm-gcc "$arm_musl/lib/musl-gcc.specs" $arm-strip 1

mbedtls_version=$(sed -n 's/^#define MBEDTLS_VERSION_STRING *"\(.*\)"/\1/p' \
    "$out/x86_64/mbedtls/include/mbedtls/version.h")
echo "Static resplock in $out (stripped sizes):"
for name in x86_64 x86_64-notls armhf; do
    case "$name" in
    *-notls) what="without TLS" ;;
    *) what="with TLS (mbedTLS $mbedtls_version)" ;;
    esac
    arch=$(file -b "$out/resplock-$name" | cut -d, -f2 | tr -d ' ')
    printf '  %-22s %8d bytes  %s, statically linked, %s\n' "resplock-$name" \
        "$(stat -c %s "$out/resplock-$name")" "$arch" "$what"
done
