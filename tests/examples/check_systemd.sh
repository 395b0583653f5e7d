#!/usr/bin/env bash
# Test examples.systemd: examples/systemd/'s units pass `systemd-analyze verify` without a word
# (its ExecStart pointed at the built resplock, which verify needs to exist; the man page the
# units name found through MANPATH), keep the settings docs/cli.md explains (KillMode=mixed,
# Type=oneshot, a TimeoutStopSec), and examples/cron/'s line names resplock run.
#   check_systemd.sh SOURCE_DIR RESPLOCK WORK_DIR
set -euo pipefail

source_dir=$1
resplock=$(realpath "$2")
work=$3
if ! command -v systemd-analyze >/dev/null; then
    echo "SKIPPED: systemd-analyze not found (scripts/install-deps.sh test installs systemd)"
    exit 77
fi
rm -rf "$work"
mkdir -p "$work/units" "$work/man/man1"
trap 'rm -rf "$work"' EXIT
cp "$source_dir/tools/resplock/resplock.1" "$work/man/man1/"

# shellcheck source=tests/support/check.sh
. "$source_dir/tests/support/check.sh"

units=()
for unit in "$source_dir"/examples/systemd/*.service "$source_dir"/examples/systemd/*.timer; do
    name=$(basename "$unit")
    sed "s|/usr/local/bin/resplock |$resplock |" "$unit" >"$work/units/$name"
    units+=("$work/units/$name")
done
check "examples/systemd/ holds no service and timer" test "${#units[@]}" -ge 2

out=$(cd "$work/units" && MANPATH=$work/man SYSTEMD_LOG_COLOR=0 \
    systemd-analyze verify "${units[@]}" 2>&1) && status=0 || status=$?
[ -n "$out" ] && printf '%s\n' "$out"
check "systemd-analyze verify exited with $status" test "$status" -eq 0
check "systemd-analyze verify said something (above)" test -z "$out"

for service in "$source_dir"/examples/systemd/*.service; do
    name=$(basename "$service")
    check "$name: ExecStart is not resplock run" grep -q '^ExecStart=/usr/local/bin/resplock .* run ' "$service"
    check "$name: not KillMode=mixed" grep -qx 'KillMode=mixed' "$service"
    check "$name: not Type=oneshot" grep -qx 'Type=oneshot' "$service"
    stop=$(sed -n 's/^TimeoutStopSec=//p' "$service")
    check "$name: no TimeoutStopSec" test -n "$stop"
    # Longer than the release's round trip (--timeout, 2 s by default) plus a stop of the job.
    if [ -n "$stop" ]; then
        us=$(systemd-analyze timespan "$stop" | sed -n 's/^ *μs: *//p')
        check "$name: TimeoutStopSec=$stop is not above 5 s" test "${us:-0}" -gt 5000000
    fi
done

cron=$source_dir/examples/cron/resplock.cron
check "examples/cron/resplock.cron has no line running resplock run" \
    grep -Eq '^([^#[:space:]]+[[:space:]]+){5}[a-z_][a-z0-9_-]*[[:space:]]+resplock .* run ' "$cron"

check_summary
