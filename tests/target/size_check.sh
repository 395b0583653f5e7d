#!/bin/sh
# CTest target.<core>.size: the footprint report of one core (`make footprint CORE=...`, which runs
# `make size`), failing when the core is over budget or when the core's table in
# docs/footprint.md differs from the figures measured.
#   size_check.sh SOURCE_DIR BUILD_DIR [CORE]       CORE: cortex-m4 (default), cortex-m0plus,
#                                                   cortex-m7 or cortex-m33
# Exits 77 (CTest's skip code) with a SKIPPED line when the cross compiler is absent.
set -u
if ! command -v arm-none-eabi-g++ >/dev/null 2>&1; then
    echo "SKIPPED: arm-none-eabi-g++ not installed"
    exit 77
fi
exec make -s --no-print-directory -C "$1" footprint CORE="${3:-cortex-m4}" SIZE_BUILD="$2" \
    SIZE_CHECK=1
