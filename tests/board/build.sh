#!/bin/sh
# Builds the board firmware for one of QEMU's MPS2 boards (tests/board/board.mk), fetching lwIP's
# (and for the TLS image mbedTLS's) Debian source package into the build tree first when absent.
#   build.sh SOURCE_DIR BUILD_DIR BOARD        BOARD: an386 (mps2-an386) or an505 (mps2-an505)
# The sources are unpacked once, in BUILD_DIR/src, for every board; each board's objects and
# images go to BUILD_DIR/BOARD (both images in one make run). Exits 77 (CTest's skip code) with a
# SKIPPED line, and leaves that line in BUILD_DIR/BOARD/skipped for the run steps, when the cross
# toolchain or QEMU is absent or lwIP's source cannot be fetched; when only mbedTLS's cannot,
# builds the plain image and leaves the reason in BUILD_DIR/BOARD/skipped-tls for the TLS run.
# Two builds must not run at once in one BUILD_DIR (CMake gives them one resource lock): both
# would fetch into BUILD_DIR/src.
set -u
src=$1
root=$2
board=$3
case $board in
an386 | an505) ;;
*)
    echo "FAILED: board $board: an386 or an505"
    exit 2
    ;;
esac
mkdir -p "$root/$board" || exit 1
root=$(cd "$root" && pwd)
build=$root/$board
rm -f "$build/skipped"
skip() {
    echo "SKIPPED: $1"
    echo "$1" >"$build/skipped"
    exit 77
}
for tool in arm-none-eabi-gcc arm-none-eabi-g++ qemu-system-arm make; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed (scripts/install-deps.sh targets)"
done
# lwIP for both images; mbedTLS for the TLS image only (without it the plain image still builds).
# A source already unpacked by another board's build is used as it is.
fetch() {
    out=$(sh "$src/tests/board/fetch-source.sh" "$1" "$root/src")
    status=$?
    [ -n "$out" ] && echo "$out"
    return $status
}
fetch lwip
case $? in
0) ;;
77) skip "the Debian source package lwip cannot be fetched" ;;
*) exit 1 ;;
esac
rm -f "$build/skipped-tls"
tls="MBEDTLS_DIR=$root/src/mbedtls"
fetch mbedtls
case $? in
0) ;;
77)
    echo "the Debian source package mbedtls cannot be fetched" >"$build/skipped-tls"
    tls=
    ;;
*) exit 1 ;;
esac
start=$(date +%s)
make -s -j2 -C "$src" -f tests/board/board.mk BOARD="$board" BOARD_BUILD="$build" \
    LWIP_DIR="$root/src/lwip" ${tls:+"$tls"} || exit 1
echo "built for mps2-$board in $(($(date +%s) - start)) s:"
arm-none-eabi-size "$build"/firmware-*.elf
