#!/bin/sh
# Prints the entries of lists in cmake/resplock-sources.cmake, one per line, for builds and
# scripts without CMake (the Makefile, the Cortex-M4 programs, lint):
#   scripts/sources.sh RESPLOCK_CORE_SOURCES [RESPLOCK_VARIANT_SOURCES ...]
here=$(dirname "$0")
exec awk -v want=" $* " '
    /^set\(RESPLOCK_[A-Z_]+$/ { name = substr($0, 5); on = index(want, " " name " ") > 0; next }
    /^\)/ { on = 0; next }
    on { sub(/^[ \t]+/, ""); sub(/[ \t]+$/, ""); if ($0 != "" && $0 !~ /^#/) print }
' "$here/../cmake/resplock-sources.cmake"
