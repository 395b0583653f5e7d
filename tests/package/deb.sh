#!/usr/bin/env bash
# Test package.deb: builds the .deb of the tool with CPack (cmake/package.cmake) in a build folder
# of its own (Release, Debian's build flags from dpkg-buildflags, no tests), then, without
# installing it: its file list is exactly the tool, its man page, its completions and
# /usr/share/doc/resplock/{copyright,changelog.gz}; its Depends were computed (libc6); the
# extracted tool prints its version and the extracted man page is the source's; and lintian finds
# no error in it (its warnings and notes are printed). Exits 77 (SKIPPED) only when a tool it needs
# is not installed (scripts/install-deps.sh test installs them).
#   deb.sh SOURCE_DIR WORK_DIR CMAKE CPACK
set -euo pipefail

source_dir=$1
work=$2
cmake=$3
cpack=$4
for tool in dpkg-deb dpkg-shlibdeps lintian gzip; do
    if ! command -v "$tool" >/dev/null; then
        echo "SKIPPED: $tool not found (scripts/install-deps.sh test installs it)"
        exit 77
    fi
done
version=$(sh "$source_dir/scripts/sources.sh" RESPLOCK_VERSION)

rm -rf "$work"
mkdir -p "$work"
# shellcheck source=tests/support/check.sh
. "$source_dir/tests/support/check.sh"
run_logged() {  # run_logged NAME COMMAND...: its output only when it fails
    local name=$1
    shift
    if ! "$@" >"$work/$name.log" 2>&1; then
        cat "$work/$name.log"
        echo "FAIL: $* (exit status above)"
        exit 1
    fi
}

flags=()
# Debian's hardening flags, all of them (bind now and PIE included).
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
if command -v dpkg-buildflags >/dev/null; then
    flags=("-DCMAKE_CXX_FLAGS=$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
        "-DCMAKE_C_FLAGS=$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
        "-DCMAKE_EXE_LINKER_FLAGS=$(dpkg-buildflags --get LDFLAGS)")
fi
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$source_dir" log -1 --format=%ct 2>/dev/null || date +%s)}
run_logged configure "$cmake" -S "$source_dir" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DRESPLOCK_BUILD_TESTS=OFF -DRESPLOCK_BUILD_TOOLS=ON "${flags[@]}"
run_logged build "$cmake" --build "$work/build" -j 1
(cd "$work/build" && run_logged cpack "$cpack" -G DEB)
deb=$(find "$work/build" -maxdepth 1 -name 'resplock_*.deb' | head -n 1)
if [ -z "$deb" ]; then
    cat "$work/cpack.log"
    echo "FAIL: cpack made no resplock_*.deb"
    exit 1
fi
echo "built $(basename "$deb")"

# The control fields.
check "Package is '$(dpkg-deb -f "$deb" Package)', not resplock" \
    test "$(dpkg-deb -f "$deb" Package)" = resplock
check "Version is '$(dpkg-deb -f "$deb" Version)', not $version" \
    test "$(dpkg-deb -f "$deb" Version)" = "$version"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
check "Depends ('$depends') does not name libc6" grep -q 'libc6' <<<"$depends"

# The file list: exactly these files.
dpkg-deb -c "$deb" | tee "$work/contents.txt"
files=$(awk '$1 !~ /^d/ {print $6}' "$work/contents.txt" | LC_ALL=C sort)
expected="./usr/bin/resplock
./usr/share/bash-completion/completions/resplock
./usr/share/doc/resplock/changelog.gz
./usr/share/doc/resplock/copyright
./usr/share/man/man1/resplock.1.gz
./usr/share/zsh/vendor-completions/_resplock"
check "the package holds
$files
instead of
$expected" test "$files" = "$expected"
check "a file or folder in the package is not owned by root/root" \
    test -z "$(awk '$2 != "root/root"' "$work/contents.txt")"

# Extracted (never installed): the tool runs, the man page and completions are the source's.
dpkg-deb -x "$deb" "$work/root"
check "the packaged resplock --version does not start with 'resplock $version'" \
    test "$("$work/root/usr/bin/resplock" --version | head -n 1)" = "resplock $version"
check "the packaged man page is not tools/resplock/resplock.1" \
    cmp -s <(gzip -dc "$work/root/usr/share/man/man1/resplock.1.gz") \
    "$source_dir/tools/resplock/resplock.1"
check "the packaged bash completion is not the source's" \
    cmp -s "$work/root/usr/share/bash-completion/completions/resplock" \
    "$source_dir/tools/resplock/completion/resplock.bash"
check "copyright is not in Debian's machine-readable format" \
    grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' \
    "$work/root/usr/share/doc/resplock/copyright"

# lintian: no error. Its other findings are printed, not failed.
lintian_status=0
lintian --allow-root --display-info --tag-display-limit 0 "$deb" >"$work/lintian.txt" 2>&1 ||
    lintian_status=$?
echo "lintian (exit $lintian_status):"
sed 's/^/    /' "$work/lintian.txt"
errors=$(grep -c '^E:' "$work/lintian.txt" || true)
echo "lintian: $errors errors, $(grep -c '^W:' "$work/lintian.txt" || true) warnings," \
    "$(grep -c '^I:' "$work/lintian.txt" || true) notes"
check "lintian found $errors errors" test "$errors" -eq 0
# lintian exits non-zero when it finds an error, and also when it cannot run at all.
check "lintian failed to run (exit $lintian_status, no error reported)" \
    test "$lintian_status" -eq 0 -o "$errors" -gt 0

if check_summary; then rm -rf "$work"; else exit 1; fi
