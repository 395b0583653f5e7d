#!/usr/bin/env bash
# Static analysis of the library, the ports and the command-line tool: clang-tidy with the checks
# in .clang-tidy, then cppcheck; then clang-format (.clang-format) over every C and C++ file of
# the repository. Exits non-zero on any finding.
# Usage: ./scripts/lint.sh [BUILD_DIR]  (a CMake build configured with
# -DCMAKE_EXPORT_COMPILE_COMMANDS=ON, which gives clang-tidy each file's flags; default build/cmake)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/cmake}
db=$build/compile_commands.json
if [ ! -f "$db" ]; then
    echo "lint.sh: $db is missing: configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON" >&2
    exit 2
fi

# The lwIP and TLS ports are compiled only when their libraries were found; what the build did not
# compile cannot be checked with its real flags, so say so instead.
cxx=()
c=()
mapfile -t sources < <(scripts/sources.sh RESPLOCK_CORE_SOURCES RESPLOCK_VARIANT_SOURCES \
    RESPLOCK_C_API_SOURCES RESPLOCK_POSIX_SOURCES RESPLOCK_MOCK_SOURCES RESPLOCK_CLI_SOURCES \
    RESPLOCK_LWIP_SOURCES RESPLOCK_LWIP_RAW_SOURCES RESPLOCK_MBEDTLS_SOURCES \
    RESPLOCK_TRANSPORT_SOURCES)
for f in "${sources[@]}"; do
    if ! grep -qF "\"file\": \"$PWD/$f\"" "$db"; then
        echo "SKIPPED: $f (not compiled in $build)"
    elif [[ $f == *.c ]]; then
        c+=("$f")
    else
        cxx+=("$f")
    fi
done

echo "clang-tidy: ${#cxx[@]} C++ and ${#c[@]} C files"
set +e
printf '%s\n' "${cxx[@]}" "${c[@]}" |
    xargs -P 2 -n 1 clang-tidy -p "$build" --quiet 2>&1 |
    grep -vE '^[0-9]+ warnings? generated\.$'
tidy=${PIPESTATUS[1]}
set -e

# Every configuration of our own macros is checked, except a user's RESPLOCK_CONFIG_FILE, which is
# not part of the tree.
cppcheck_flags=(--enable=warning,style,performance,portability --error-exitcode=1 --inline-suppr
    --library=posix --quiet -URESPLOCK_CONFIG_FILE -Iinclude -Isrc -I"$build/include")
echo "cppcheck: ${#cxx[@]} C++ files (C++17) and ${#c[@]} C files (C99)"
check=0
cppcheck "${cppcheck_flags[@]}" --language=c++ --std=c++17 "${cxx[@]}" || check=1
if ((${#c[@]})); then
    cppcheck "${cppcheck_flags[@]}" --language=c --std=c99 "${c[@]}" || check=1
fi

mapfile -t formatted < <(git ls-files '*.c' '*.cpp' '*.h' '*.hpp')
echo "clang-format: ${#formatted[@]} files"
format=0
clang-format --dry-run --Werror "${formatted[@]}" || format=1

if [ "$tidy" -ne 0 ] || [ "$check" -ne 0 ] || [ "$format" -ne 0 ]; then
    echo "lint.sh: FAILED (clang-tidy exit $tidy, cppcheck $([ $check -eq 0 ] && echo clean || echo found issues), clang-format $([ $format -eq 0 ] && echo clean || echo 'found unformatted files: clang-format -i them'))" >&2
    exit 1
fi
echo "lint.sh: clang-tidy, cppcheck and clang-format clean"
