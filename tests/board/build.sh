#!/bin/sh
# Builds the board firmware for QEMU's mps2-an386 (tests/board/board.mk), fetching lwIP's (and
# for the TLS image mbedTLS's) Debian source package into the build tree first when absent.
#   build.sh SOURCE_DIR BUILD_DIR
# Exits 77 (CTest's skip code) with a SKIPPED line, and leaves that line in BUILD_DIR/skipped for
# the run steps, when the cross toolchain or QEMU is absent or lwIP's source cannot be fetched;
# when only mbedTLS's cannot, builds the plain image and leaves the reason in
# BUILD_DIR/skipped-tls for the TLS run.
set -u
src=$1
build=$2
mkdir -p "$build" || exit 1
build=$(cd "$build" && pwd)
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
fetch() {
    out=$(sh "$src/tests/board/fetch-source.sh" "$1" "$build/src")
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
tls="MBEDTLS_DIR=$build/src/mbedtls"
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
make -s -j2 -C "$src" -f tests/board/board.mk BOARD_BUILD="$build" LWIP_DIR="$build/src/lwip" \
    ${tls:+"$tls"} || exit 1
echo "built in $(($(date +%s) - start)) s:"
arm-none-eabi-size "$build"/firmware-*.elf
