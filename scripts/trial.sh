#!/usr/bin/env bash
# The fault-injection trial (tests/trial/): real topologies on 127.0.0.1, a workload of lock
# clients writing to a resource, faults injected in an order drawn from a seed, and a checker of
# the history. See docs/guarantees.md.
#   scripts/trial.sh                  the full run (every row of docs/guarantees.md, every fault
#                                     that applies, plain and fenced; about 20 minutes), then its
#                                     table written into docs/guarantees.md
#   scripts/trial.sh --short          the short run the test suite makes (about 3 minutes)
#   scripts/trial.sh --self-test      the checker against a deliberately broken client and resource
#   scripts/trial.sh ... --seed N     repeat a run (the seed is printed at the start)
#   scripts/trial.sh ... --only ROW   one row of the table, e.g. --only 'sentinel, --replicas 2'
# Builds with CMake in build/cmake (RESPLOCK_TRIAL_BUILD overrides). A run with violations where
# the docs promise none exits 1 and writes its history to the current folder
# (trial-SEED-TOPOLOGY-MODE.history).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RESPLOCK_TRIAL_BUILD:-build/cmake}

case "${1:-}" in
    -h | --help)
        sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
esac

./scripts/install-deps.sh test
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DRESPLOCK_WERROR=ON >/dev/null
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target trial trial_client trial_writer resplock_cli

args=("$@")
full=1 table=1
for a in "$@"; do
    case "$a" in
        --short | --self-test) full=0 ;;
        --only) table=0 ;;  # one row: the published table stays as it is
    esac
done
if ((full)); then
    args=(--full "${args[@]}")
    if ((table)); then args+=(--table docs/guarantees.md); fi
fi
exec "$build/tests/trial/trial" "${args[@]}"
