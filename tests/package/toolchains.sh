#!/bin/sh
# package.toolchains_cortex_m: the library alone configured and built with the bare-metal
# toolchain files of cmake/toolchains for the Cortex-M0+, M7 and M33, in every float ABI the core
# has (the Cortex-M4's file is package.firmware_cortex_m4's, in both ABIs: firmware.sh),
# warnings as errors. Checks that the objects were compiled for that core's architecture and ABI,
# and that a hard-float ABI on the Cortex-M0+ (no FPU) is refused at configure time.
#   toolchains.sh SOURCE_DIR BUILD_DIR CMAKE
# Exits 77 (skipped) without arm-none-eabi-gcc.
set -eu
src=$1
build=$2
cmake=$3

for tool in arm-none-eabi-gcc arm-none-eabi-g++ arm-none-eabi-readelf; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "SKIPPED: $tool not installed (scripts/install-deps.sh targets)"
        exit 77
    fi
done

fail() {
    echo "FAIL: $*"
    exit 1
}

mkdir -p "$build"
# core, float ABI, the architecture the ELF attributes must name
for entry in cortex-m0plus:soft:v6S-M cortex-m7:hard:v7E-M cortex-m7:soft:v7E-M \
    cortex-m33:hard:v8-M.mainline cortex-m33:soft:v8-M.mainline; do
    core=${entry%%:*}
    rest=${entry#*:}
    abi=${rest%%:*}
    arch=${rest#*:}
    dir=$build/$core-$abi
    rm -rf "$dir"
    echo "--- $core, $abi float"
    "$cmake" -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=MinSizeRel \
        -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchains/arm-none-eabi-$core.cmake" \
        -DRESPLOCK_FLOAT_ABI=$abi -DRESPLOCK_WERROR=ON -DRESPLOCK_BUILD_TESTS=OFF \
        -DRESPLOCK_BUILD_TOOLS=OFF >"$dir.configure.log" 2>&1 ||
        { cat "$dir.configure.log"; fail "$core $abi: configure"; }
    "$cmake" --build "$dir" --target resplock -j 2 >"$dir.build.log" 2>&1 ||
        { cat "$dir.build.log"; fail "$core $abi: build"; }
    lib=$dir/libresplock.a
    [ -f "$lib" ] || fail "$core $abi: no libresplock.a"
    grep -q "^RESPLOCK_WITH_POSIX:BOOL=OFF" "$dir/CMakeCache.txt" || fail "$core $abi: POSIX port"
    grep -q -- "-mcpu=$core " "$dir/CMakeCache.txt" || fail "$core $abi: no -mcpu=$core"

    # The first object's attributes: the architecture, and VFP argument passing for hard float.
    attrs=$(arm-none-eabi-readelf -A "$lib" | sed -n '/^File: /,/^$/p' | sed -n '1,/^$/p')
    echo "$attrs" | grep -q "Tag_CPU_arch: $arch\$" ||
        { echo "$attrs"; fail "$core $abi: not $arch"; }
    if [ $abi = hard ]; then
        echo "$attrs" | grep -q "Tag_ABI_VFP_args: VFP registers" || fail "$core: not hard-float"
    else
        echo "$attrs" | grep -q "Tag_ABI_VFP_args: VFP registers" && fail "$core: hard-float"
        echo "$attrs" | grep -q "Tag_FP_arch" && fail "$core: soft float with an FPU"
    fi
    echo "ok: $core $abi float: libresplock.a ($arch)"
done

# A core without an FPU refuses the hard-float ABI.
dir=$build/cortex-m0plus-hard
rm -rf "$dir"
if "$cmake" -S "$src" -B "$dir" -DRESPLOCK_FLOAT_ABI=hard -DRESPLOCK_BUILD_TESTS=OFF \
    -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchains/arm-none-eabi-cortex-m0plus.cmake" \
    -DRESPLOCK_BUILD_TOOLS=OFF >"$dir.configure.log" 2>&1; then
    fail "cortex-m0plus: hard float accepted"
fi
grep -q "must be soft on the cortex-m0plus" "$dir.configure.log" ||
    { cat "$dir.configure.log"; fail "cortex-m0plus hard: not the expected error"; }
echo "ok: cortex-m0plus refuses hard float"
