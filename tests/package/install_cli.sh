#!/usr/bin/env bash
# Test package.install_cli: `make install` and `cmake --install`, each into a DESTDIR of its own
# with PREFIX /usr/local, put the tool, its man page and its completions where docs/cli.md says
# (#installing), each file as in the source tree; make installs nothing else, and cmake's
# component "cli" (what the .deb holds) adds only share/doc/resplock/copyright and changelog.gz.
# (package.install checks the whole of `cmake --install`: the library, headers, CMake package.)
#   install_cli.sh SOURCE_DIR CMAKE_BUILD_DIR WORK_DIR CMAKE MAKE
set -euo pipefail

source_dir=$1
cmake_build=$2
work=$3
cmake=$4
make=$5
version=$(sh "$source_dir/scripts/sources.sh" RESPLOCK_VERSION)

rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/support/check.sh
. "$source_dir/tests/support/check.sh"

"$make" -s -C "$source_dir" BUILD="$work/make" DESTDIR="$work/make-root" PREFIX=/usr/local install \
    >"$work/make.log" 2>&1 || {
    cat "$work/make.log"
    echo "FAIL: make install"
    exit 1
}
DESTDIR="$work/cmake-root" "$cmake" --install "$cmake_build" --prefix /usr/local --component cli \
    >"$work/cmake.log" 2>&1 || {
    cat "$work/cmake.log"
    echo "FAIL: cmake --install"
    exit 1
}

# What docs/cli.md's table of installed files names, relative to PREFIX.
doc_paths=$(sed -n '/^## Installing/,/^## /p' "$source_dir/docs/cli.md" |
    sed -n 's/^| `\(PREFIX\/\)\{0,1\}\([^`]*\)` |.*/\2/p')
expected="bin/resplock
share/bash-completion/completions/resplock
share/man/man1/resplock.1.gz
share/zsh/vendor-completions/_resplock"
check "docs/cli.md's table of installed files names '$doc_paths', expected '$expected'" \
    test "$(printf '%s\n' "$doc_paths" | LC_ALL=C sort)" = "$expected"

for kind in make cmake; do
    root=$work/$kind-root/usr/local
    while read -r rel; do
        check "$kind install: $rel is missing" test -f "$root/$rel"
    done <<<"$expected"
    [ -x "$root/bin/resplock" ] && check "$kind install: bin/resplock --version" \
        test "$("$root/bin/resplock" --version | head -n 1)" = "resplock $version"
    [ -f "$root/share/man/man1/resplock.1.gz" ] && check \
        "$kind install: the man page is not tools/resplock/resplock.1 gzip'd" \
        cmp -s <(gzip -dc "$root/share/man/man1/resplock.1.gz") "$source_dir/tools/resplock/resplock.1"
    check "$kind install: the bash completion differs from the source tree's" \
        cmp -s "$root/share/bash-completion/completions/resplock" \
        "$source_dir/tools/resplock/completion/resplock.bash"
    check "$kind install: the zsh completion differs from the source tree's" \
        cmp -s "$root/share/zsh/vendor-completions/_resplock" \
        "$source_dir/tools/resplock/completion/_resplock"
    check "$kind install: the man page is not mode 644" \
        test "$(stat -c %a "$root/share/man/man1/resplock.1.gz")" = 644
done

# make installs exactly those files, and only under PREFIX.
made=$(cd "$work/make-root" && find . -type f | sed 's|^\./usr/local/||' | LC_ALL=C sort)
check "make install wrote '$made', expected exactly '$expected'" test "$made" = "$expected"
# cmake's component cli: the same files, plus the package's share/doc/resplock/.
cmade=$(cd "$work/cmake-root" && find . -type f | sed 's|^\./usr/local/||' | LC_ALL=C sort)
cexpected=$(printf '%s\n' "$expected" share/doc/resplock/changelog.gz share/doc/resplock/copyright |
    LC_ALL=C sort)
check "cmake --install --component cli wrote '$cmade', expected exactly '$cexpected'" \
    test "$cmade" = "$cexpected"

check_summary
