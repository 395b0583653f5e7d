# The shell tests' checks, sourced by tests/package/deb.sh, tests/package/install_cli.sh and
# tests/examples/check_systemd.sh:
#   check DESCRIPTION COMMAND...   runs COMMAND; counts it passed, or failed with "FAIL: DESCRIPTION"
#   check_summary                  prints "N passed, M failed"; returns 0 only when none failed
# shellcheck shell=bash
failed=0
passed=0
check() {
    local what=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $what"
    fi
}
check_summary() {
    echo "$passed passed, $failed failed"
    ((failed == 0))
}
