#!/bin/sh
# package.firmware_cortex_m4: tests/package/firmware (a C-only bare-metal project taking resplock
# in with add_subdirectory) configured with cmake/toolchains/arm-none-eabi-cortex-m4.cmake and
# built for the hard-float and for the soft-float ABI, warnings as errors. Checks that the firmware
# links (a library of the other ABI fails with "uses VFP register arguments"), that its ABI is the
# one asked for, that the library was compiled with one section per function and per object, and
# that no host directory (lwIP or mbedTLS under /usr) reached the cross build, while a directory the
# user gives is taken.
#   firmware.sh SOURCE_DIR BUILD_DIR CMAKE
# Exits 77 (skipped) without arm-none-eabi-gcc.
set -eu
src=$1
build=$2
cmake=$3

for tool in arm-none-eabi-gcc arm-none-eabi-readelf; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "SKIPPED: $tool not installed (scripts/install-deps.sh targets)"
        exit 77
    fi
done

fail() {
    echo "FAIL: $*"
    exit 1
}

for abi in hard soft; do
    dir=$build/$abi
    rm -rf "$dir"
    mkdir -p "$build"
    echo "--- $abi float"
    "$cmake" -S "$src/tests/package/firmware" -B "$dir" -DCMAKE_BUILD_TYPE=MinSizeRel \
        -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchains/arm-none-eabi-cortex-m4.cmake" \
        -DRESPLOCK_FLOAT_ABI=$abi -DRESPLOCK_SOURCE_DIR="$src" -DRESPLOCK_WERROR=ON \
        -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$dir.configure.log" 2>&1 ||
        { cat "$dir.configure.log"; fail "$abi: configure"; }
    "$cmake" --build "$dir" -j 2 || fail "$abi: build or link"
    [ -f "$dir/firmware.elf" ] || fail "$abi: no firmware.elf"

    # The ABI of the firmware, as its attributes record it.
    attrs=$(arm-none-eabi-readelf -A "$dir/firmware.elf")
    if [ $abi = hard ]; then
        echo "$attrs" | grep -q "Tag_ABI_VFP_args: VFP registers" || fail "hard: not hard-float"
    else
        echo "$attrs" | grep -q "Tag_ABI_VFP_args: VFP registers" && fail "soft: hard-float"
    fi
    echo "$attrs" | grep -q "Tag_CPU_name: \"7E-M\"\|Tag_CPU_arch: v7E-M" ||
        fail "$abi: not built for the Cortex-M4 (ARMv7E-M)"

    # One section per function: Lock::acquire in its own .text section.
    arm-none-eabi-readelf -S -W "$dir/resplock/libresplock.a" |
        grep -q "\.text\._ZN8resplock4Lock7acquire" || fail "$abi: no -ffunction-sections"

    # Bare metal: no POSIX port, nothing found on the host.
    grep -q "^RESPLOCK_WITH_POSIX:BOOL=OFF" "$dir/CMakeCache.txt" || fail "$abi: POSIX port on"
    grep -q "^RESPLOCK_WITH_LWIP:BOOL=OFF" "$dir/CMakeCache.txt" || fail "$abi: host lwIP found"
    grep -q "^RESPLOCK_WITH_MBEDTLS:BOOL=OFF" "$dir/CMakeCache.txt" || fail "$abi: host mbedTLS"
    if grep -q -- "-I/usr\|-isystem /usr" "$dir/compile_commands.json"; then
        fail "$abi: a host include directory in the cross build"
    fi
    echo "ok: $abi float: firmware.elf linked"
done

# lwIP from where the user points, in a cross build: a firmware tree's include directory (here one
# that only holds lwip/sockets.h: configure only) turns the lwIP port on.
dir=$build/user-lwip
rm -rf "$dir"
mkdir -p "$dir/lwip-tree/lwip"
: >"$dir/lwip-tree/lwip/sockets.h"
"$cmake" -S "$src/tests/package/firmware" -B "$dir/build" \
    -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchains/arm-none-eabi-cortex-m4.cmake" \
    -DRESPLOCK_SOURCE_DIR="$src" -DRESPLOCK_LWIP_INCLUDE_DIR="$dir/lwip-tree" \
    >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; fail "user lwIP: configure"; }
grep -q "^RESPLOCK_WITH_LWIP:BOOL=ON" "$dir/build/CMakeCache.txt" ||
    fail "lwIP at RESPLOCK_LWIP_INCLUDE_DIR not taken"
grep -q "resplock::lwip -> resplock_lwip" "$dir/configure.log" || fail "no resplock::lwip"
echo "ok: lwIP from RESPLOCK_LWIP_INCLUDE_DIR in a cross build"
