#!/bin/sh
# CTest: the Cortex-M4 footprint report (`make size`), failing when the core is over budget.
#   size_check.sh SOURCE_DIR BUILD_DIR
# Exits 77 (CTest's skip code) with a SKIPPED line when the cross compiler is absent.
set -u
if ! command -v arm-none-eabi-g++ >/dev/null 2>&1; then
    echo "SKIPPED: arm-none-eabi-g++ not installed"
    exit 77
fi
exec make -s -C "$1" size SIZE_BUILD="$2" SIZE_CHECK=1
