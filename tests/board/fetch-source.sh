#!/bin/sh
# Fetches and unpacks one Debian source package (lwip, mbedtls) into a build tree, without
# touching the system's apt configuration: a private sources file and lists directory are given
# to apt-get through its options. Nothing fetched belongs in the repository.
#   fetch-source.sh PACKAGE DEST_DIR
# Leaves DEST_DIR/PACKAGE (the unpacked source) and exits 0; exits 77 with a SKIPPED line when
# apt-get source is unavailable or the package cannot be fetched (no network to Debian).
set -u
pkg=$1
dest=$2
if [ -d "$dest/$pkg" ]; then exit 0; fi
for tool in apt-get dpkg-source; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "SKIPPED: $tool not installed (scripts/install-deps.sh targets)"
        exit 77
    fi
done
mkdir -p "$dest/apt/lists/partial" "$dest/apt/archives/partial" "$dest/apt/parts" || exit 1
dest=$(cd "$dest" && pwd) || exit 1
# The mirror the system already uses (deb822 or one-line sources), bookworm by default;
# RESPLOCK_DEBIAN_MIRROR overrides it.
mirror=${RESPLOCK_DEBIAN_MIRROR:-}
[ -n "$mirror" ] || mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)\/*$/\1/p; s/^deb \(\[[^]]*\] \)\{0,1\}\(http[^ ]*debian\)\/* .*/\2/p' \
    /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -n 1)
# shellcheck disable=SC1091
suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-bookworm}")
echo "deb-src ${mirror:-http://deb.debian.org/debian} ${suite:-bookworm} main" >"$dest/apt/sources.list"
set -- -o Dir::Etc::SourceList="$dest/apt/sources.list" -o Dir::Etc::SourceParts="$dest/apt/parts" \
    -o Dir::State::Lists="$dest/apt/lists" -o Dir::Cache::Archives="$dest/apt/archives" \
    -o APT::Sandbox::User=root
log="$dest/apt/$pkg.log"
if ! apt-get "$@" -qq update >"$log" 2>&1; then
    cat "$log"
    echo "SKIPPED: cannot reach the Debian source index for $pkg"
    exit 77
fi
work="$dest/apt/src-$pkg"
rm -rf "$work" && mkdir -p "$work" || exit 1
if ! (cd "$work" && apt-get "$@" -qq source "$pkg") >>"$log" 2>&1; then
    cat "$log"
    echo "SKIPPED: cannot fetch the Debian source package $pkg"
    exit 77
fi
dir=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
if [ -z "$dir" ]; then
    echo "FAILED: apt-get source $pkg unpacked nothing"
    exit 1
fi
mv "$dir" "$dest/$pkg" && rm -rf "$work"
