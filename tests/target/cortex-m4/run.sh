#!/bin/sh
# The Cortex-M unit-test programs, for CTest and `make cortex-m4-tests`.
#   run.sh build SOURCE_DIR BUILD_DIR [CORE]   build every tests/unit test as a program under
#                                              BUILD_DIR/unit (tests/unit/core/test_lock.cpp:
#                                              BUILD_DIR/unit/core/test_lock.elf) for CORE:
#                                              cortex-m4 (default), cortex-m0plus or cortex-m33
#                                              (unit.mk's M4_CORE)
#   run.sh run ELF [TIMEOUT_S] [BOARD]         run one under QEMU with semihosting on BOARD:
#                                              mps2-an386 (default; the Cortex-M4 and the
#                                              Cortex-M0+ programs) or mps2-an505 (Cortex-M33)
# Exits 77 (CTest's skip code) with a SKIPPED line when the cross toolchain or QEMU is absent.
# A run passes only when the program exits 0 AND printed "N passed, 0 failed" with N > 0, so a
# program that stops early (fault, lost exit status) cannot pass.
set -u

need() {
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "SKIPPED: $1 not installed"
        exit 77
    fi
}

case "${1:-}" in
build)
    need arm-none-eabi-g++
    need make
    exec make -s -j2 -C "$2" -f tests/target/cortex-m4/unit.mk M4_BUILD="$3" \
        M4_CORE="${4:-cortex-m4}"
    ;;
run)
    need arm-none-eabi-g++
    need qemu-system-arm
    elf=$2
    limit=${3:-120}
    board=${4:-mps2-an386}
    if [ ! -f "$elf" ]; then
        echo "$elf does not exist: its build step (target.<core>.build) failed"
        exit 1
    fi
    log=$(mktemp) || exit 1
    trap 'rm -f "$log"' EXIT
    # -no-reboot: a reset request ends QEMU instead of re-running the program; `timeout` turns a
    # hang (e.g. a lock-up loop) into a failure.
    timeout "$limit" qemu-system-arm -M "$board" -nographic -monitor none -no-reboot \
        -semihosting-config enable=on,target=native -kernel "$elf" </dev/null >"$log" 2>&1
    status=$?
    cat "$log"
    if [ "$status" -eq 124 ]; then
        echo "FAILED: $elf did not finish within ${limit} s"
        exit 1
    fi
    if [ "$status" -ne 0 ]; then
        echo "FAILED: $elf exited with status $status"
        exit 1
    fi
    if ! grep -Eq '^[1-9][0-9]* passed, 0 failed$' "$log"; then
        echo "FAILED: $elf exited 0 without its \"N passed, 0 failed\" summary"
        exit 1
    fi
    exit 0
    ;;
*)
    echo "usage: $0 build SOURCE_DIR BUILD_DIR [CORE] | run ELF [TIMEOUT_S] [BOARD]" >&2
    exit 2
    ;;
esac
