#!/bin/sh
# CTest target.make_cross: `make CROSS=<prefix>` picks the POSIX port and the tool by the target.
#   make_cross.sh SOURCE_DIR BUILD_DIR
# Dry runs (make -n) for prefixes of hosted and bare-metal targets: the POSIX port's objects and
# the tool are in the plan exactly when POSIX=1 (by default: the host, *-linux-*, darwin, *bsd,
# cygwin), and POSIX=0/1 overrides the choice. Then real builds (-O0, warnings as errors): with
# arm-linux-gnueabihf- the POSIX port and an ARM resplock tool, with arm-none-eabi- the library
# only; each skipped when its compiler is absent (the whole test exits 77 when both are).
set -eu
src=$1
build=$2
cd "$src"

fail() {
    echo "FAIL: $*"
    exit 1
}

# plan PREFIX [MAKE ARGS]: 1 when the dry run builds the POSIX port and links the tool, else 0.
plan() {
    prefix=$1
    shift
    out=$(make -n CROSS="$prefix" BUILD="$build/dry" "$@" all)
    if echo "$out" | grep -q "ports/posix/" &&
        echo "$out" | grep -q -- "-o $build/dry/resplock "; then
        echo 1
    elif echo "$out" | grep -q "ports/posix/\|$build/dry/resplock "; then
        echo "half"
    else
        echo 0
    fi
}

for entry in ":1" "arm-linux-gnueabihf-:1" "aarch64-linux-gnu-:1" "x86_64-apple-darwin21-:1" \
    "x86_64-unknown-freebsd13-:1" "arm-none-eabi-:0" "riscv64-unknown-elf-:0" \
    "xtensa-esp32-elf-:0" "riscv32-esp-elf-:0"; do
    prefix=${entry%:*}
    want=${entry##*:}
    got=$(plan "$prefix")
    [ "$got" = "$want" ] || fail "CROSS=$prefix: POSIX port and tool $got, expected $want"
    echo "ok: CROSS=${prefix:-(none)} gives POSIX=$want"
done
[ "$(plan arm-none-eabi- POSIX=1)" = 1 ] || fail "POSIX=1 not taken with arm-none-eabi-"
[ "$(plan arm-linux-gnueabihf- POSIX=0)" = 0 ] || fail "POSIX=0 not taken with arm-linux-gnueabihf-"
echo "ok: POSIX=0/1 overrides the choice"

built=0
if command -v arm-linux-gnueabihf-g++ >/dev/null 2>&1; then
    dir=$build/arm-linux-gnueabihf
    rm -rf "$dir"
    make -s -j2 CROSS=arm-linux-gnueabihf- BUILD="$dir" CXXFLAGS=-O0 WERROR=1 ||
        fail "arm-linux-gnueabihf-: build"
    ls "$dir/obj/ports/posix/"*.o >/dev/null 2>&1 || fail "arm-linux-gnueabihf-: no POSIX port"
    arm-linux-gnueabihf-readelf -h "$dir/resplock" | grep -q "Machine:.*ARM" ||
        fail "arm-linux-gnueabihf-: the tool is not an ARM program"
    echo "ok: CROSS=arm-linux-gnueabihf-: the POSIX port and an ARM resplock tool"
    built=1
else
    echo "skipped: arm-linux-gnueabihf-g++ not installed"
fi
if command -v arm-none-eabi-g++ >/dev/null 2>&1; then
    dir=$build/arm-none-eabi
    rm -rf "$dir"
    make -s -j2 CROSS=arm-none-eabi- BUILD="$dir" WERROR=1 \
        CXXFLAGS="-O0 -mcpu=cortex-m0plus -mthumb -ffunction-sections -fdata-sections" ||
        fail "arm-none-eabi-: build"
    [ -f "$dir/libresplock.a" ] || fail "arm-none-eabi-: no libresplock.a"
    [ ! -e "$dir/obj/ports" ] || fail "arm-none-eabi-: a port was built"
    [ ! -e "$dir/resplock" ] || fail "arm-none-eabi-: the tool was built"
    echo "ok: CROSS=arm-none-eabi-: the library only"
    built=1
else
    echo "skipped: arm-none-eabi-g++ not installed"
fi
if [ $built = 0 ]; then
    echo "SKIPPED: neither arm-linux-gnueabihf-g++ nor arm-none-eabi-g++ installed"
    exit 77
fi
