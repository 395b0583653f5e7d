#!/bin/sh
# The raw-API port over real lwIP: fetches lwIP's Debian source package into the build tree when
# absent, builds lwIP (NO_SYS=1, LWIP_DNS=1), the port and the tests with the given host compilers
# (host.mk), and runs one test: test_lwip_raw_dns (name lookups, the default) or
# test_lwip_raw_port (the connection's calls against a real redis-server).
#   run.sh SOURCE_DIR BUILD_DIR CC CXX [TEST [PORT_FLAGS]]
# PORT_FLAGS: more flags for the port's compile and the links (host.mk's PORT_EXTRA_FLAGS).
# Exits 77 (CTest's skip code) with a SKIPPED line when make is missing or the source cannot be
# fetched.
set -u
src=$1
build=$2
cc=$3
cxx=$4
test=${5:-test_lwip_raw_dns}
port_flags=${6:-}
command -v make >/dev/null 2>&1 || {
    echo "SKIPPED: make not installed"
    exit 77
}
mkdir -p "$build" || exit 1
build=$(cd "$build" && pwd) || exit 1
out=$(sh "$src/tests/board/fetch-source.sh" lwip "$build/src")
status=$?
[ -n "$out" ] && echo "$out"
[ "$status" -eq 0 ] || exit "$status"
make -s -j2 -C "$src" -f tests/lwip/raw/host.mk RAW_BUILD="$build" LWIP_DIR="$build/src/lwip" \
    CC="$cc" CXX="$cxx" PORT_EXTRA_FLAGS="$port_flags" || exit 1
exec "$build/$test"
