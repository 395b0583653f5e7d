#!/usr/bin/env bash
# The fault-injection trial (tests/trial/): real topologies on 127.0.0.1, a workload of lock
# clients writing to a resource, faults injected in an order drawn from a seed, and a checker of
# the history. See docs/guarantees.md.
#   scripts/trial.sh                  the full run (every row of docs/guarantees.md, every fault
#                                     that applies, plain and fenced; about 70 minutes), then its
#                                     table written into docs/guarantees.md
#   scripts/trial.sh --short          the short run the test suite makes (about 2 minutes; the
#                                     plain lock only, without the faults freeze-sentinel,
#                                     split-brain, freeze-replica and two-faults)
#   scripts/trial.sh --self-test      the checker against a deliberately broken client and resource
#   scripts/trial.sh ... --seed N     repeat a run (the seed is printed at the start)
#   scripts/trial.sh ... --only ROW   one row of the table, e.g. --only 'sentinel, --limit 3 --fair'
#                                     (rows: single, sentinel and cluster with their options, the
#                                     fair lock and the semaphore --limit 1/3, plain and --fair,
#                                     under Sentinel and in the Cluster; quorum of 5)
#   scripts/trial.sh ... --faults L   with the full run: only the faults of the comma-separated
#                                     list L, e.g. --faults freeze-sentinel,split-brain
# Builds with CMake in build/cmake (RESPLOCK_TRIAL_BUILD overrides). A run with violations where
# the docs promise none exits 1 and writes its history to the current folder
# (trial-SEED-TOPOLOGY-MODE.history).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${RESPLOCK_TRIAL_BUILD:-build/cmake}

case "${1:-}" in
    -h | --help)
        sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
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
        --only | --faults) table=0 ;;  # a part of the table: the published one stays as it is
    esac
done
if ((full)); then
    args=(--full "${args[@]}")
    if ((table)); then args+=(--table docs/guarantees.md); fi
fi
exec "$build/tests/trial/trial" "${args[@]}"
