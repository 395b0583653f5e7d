#!/usr/bin/env bash
# Line and branch coverage of the library (src/) and its ports (ports/, except the mock port) from
# what a build configured with -DRESPLOCK_COVERAGE=ON recorded while its tests ran (gcov's .gcda
# files), through gcovr. Prints each file's lines and branches and the totals, and fails when the
# totals are below the gate: 90 % of lines, 80 % of branches. Branches the compiler adds for
# exceptions and branches gcov marks unreachable are left out (gcovr's --exclude-throw-branches
# and --exclude-unreachable-branches); no line or file of ours is.
#   scripts/coverage.sh BUILD_DIR             the table and the gate (scripts/test.sh runs this)
#   scripts/coverage.sh --markdown BUILD_DIR  the table as docs/testing.md shows it, no gate
#   scripts/coverage.sh --self-test           the gate over a small program of its own, run once
#                                             partly (the gate must fail) and once wholly (pass)
# Exits 1 below the gate, 2 on a usage error or when gcovr is missing.
set -euo pipefail

line_gate=90
branch_gate=80

usage() {
    echo "usage: scripts/coverage.sh [--markdown] BUILD_DIR | --self-test" >&2
    exit 2
}

# report ROOT BUILD_DIR MODE: gcovr over BUILD_DIR's data for ROOT's src/ and ports/ (not
# ports/mock/); MODE "gate" prints the table and the totals and returns 1 below the gate,
# "markdown" prints the table in Markdown.
report() {
    local root=$1 build=$2 mode=$3 summary status=0
    summary=$(mktemp)
    # gcovr's own exit status says whether a threshold was missed (2 lines, 4 branches, 6 both).
    (cd "$root" && gcovr --root . --filter 'src/' --filter 'ports/' --exclude 'ports/mock/' \
        --exclude-throw-branches --exclude-unreachable-branches \
        --json-summary "$summary" \
        --fail-under-line "$line_gate" --fail-under-branch "$branch_gate" "$build") ||
        status=$?
    if ((status != 0 && status != 2 && status != 4 && status != 6)); then
        rm -f "$summary"
        echo "coverage.sh: gcovr failed (exit $status)" >&2
        return 2
    fi
    python3 - "$summary" "$mode" "$line_gate" "$branch_gate" <<'EOF'
import json
import sys

path, mode, line_gate, branch_gate = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
with open(path) as f:
    s = json.load(f)


def pct(covered, total):
    return 100.0 * covered / total if total else 100.0


rows = [(f["filename"], f["line_covered"], f["line_total"], f["branch_covered"],
         f["branch_total"]) for f in s["files"]]
rows.sort()
total = ("total", s["line_covered"], s["line_total"], s["branch_covered"], s["branch_total"])
if mode == "markdown":
    print("| file | lines | branches |")
    print("|---|---|---|")
    for name, lc, lt, bc, bt in rows:
        print(f"| `{name}` | {pct(lc, lt):.1f} % ({lc}/{lt}) | {pct(bc, bt):.1f} % ({bc}/{bt}) |")
    name, lc, lt, bc, bt = total
    print(f"| **total** | **{pct(lc, lt):.1f} %** ({lc}/{lt}) | **{pct(bc, bt):.1f} %** ({bc}/{bt}) |")
    sys.exit(0)
width = max(len(r[0]) for r in rows + [total])
print(f"{'file':<{width}}  {'lines':>20}  {'branches':>20}")
for name, lc, lt, bc, bt in rows + [total]:
    lines = f"{pct(lc, lt):5.1f} % {lc:>5}/{lt:<5}"
    branches = f"{pct(bc, bt):5.1f} % {bc:>5}/{bt:<5}"
    mark = "" if name == "total" or (pct(lc, lt) >= line_gate and pct(bc, bt) >= branch_gate) else "  (below the gate)"
    print(f"{name:<{width}}  {lines:>20}  {branches:>20}{mark}")
EOF
    rm -f "$summary"
    [ "$mode" = "gate" ] || return 0
    if ((status != 0)); then
        echo "coverage gate: FAILED: the totals must reach ${line_gate} % of lines and" \
            "${branch_gate} % of branches"
        return 1
    fi
    echo "coverage gate: passed (at least ${line_gate} % of lines, ${branch_gate} % of branches)"
}

# A program of two files under a scratch root: src/sample.c, of which each run covers more, and
# ports/mock/mock.c, never run (the filter leaves it out, so it must not lower the totals). Three
# runs: the first misses both gates, the second the branch gate only, the third neither.
self_test() {
    local dir status
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' RETURN
    mkdir -p "$dir/src" "$dir/ports/mock" "$dir/build"
    cat >"$dir/src/sample.c" <<'EOF'
int mock_unused(int x);
static int clamped_triple(int x) {
    int y = x + x;
    y = y + x;
    if (y > 100) y = 100;
    return y;
}
static int twice(int x) {
    return x + x;
}
int main(int argc, char** argv) {
    (void)argv;
    if (argc > 1) return clamped_triple(argc) >= 6 ? 0 : 1;
    return twice(argc) == 2 ? 0 : 1;
}
EOF
    printf 'int mock_unused(int x) {\n    if (x > 0) return x;\n    return -x;\n}\n' \
        >"$dir/ports/mock/mock.c"
    (cd "$dir/build" && cc --coverage -O0 -o sample ../src/sample.c ../ports/mock/mock.c)
    local -a runs=("" "a" "a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a")
    local -a expected=(1 1 0)
    local -a what=("without arguments: below both gates" "with one argument: every line, below the branch gate" "with 36 arguments: every line and branch")
    local i
    for i in 0 1 2; do
        # shellcheck disable=SC2086 # the arguments are words on purpose
        "$dir/build/sample" ${runs[i]}
        echo "--- after a run ${what[i]}"
        status=0
        report "$dir" "$dir/build" gate 2>&1 || status=$?
        if ((status != expected[i])); then
            echo "coverage.sh --self-test: FAILED: the gate returned $status, expected ${expected[i]}" >&2
            return 1
        fi
    done
    echo "coverage.sh --self-test: passed"
}

if ! command -v gcovr >/dev/null; then
    echo "coverage.sh: gcovr is not installed (scripts/install-deps.sh test)" >&2
    exit 2
fi
mode=gate
case "${1:-}" in
--self-test)
    [ $# -eq 1 ] || usage
    self_test
    exit
    ;;
--markdown)
    mode=markdown
    shift
    ;;
esac
[ $# -eq 1 ] || usage
[ -d "$1" ] || {
    echo "coverage.sh: no build directory $1" >&2
    exit 2
}
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
report "$root" "$build" "$mode"
