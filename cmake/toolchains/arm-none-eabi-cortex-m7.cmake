# Bare-metal Cortex-M7 (ARMv7E-M, double-precision FPU). Usage:
#   cmake -S . -B build/m7 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-none-eabi-cortex-m7.cmake
#         [-DRESPLOCK_FLOAT_ABI=soft]
# RESPLOCK_FLOAT_ABI picks the calling convention, which must match the firmware's:
#   hard (default)  -mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard
#   soft            -mcpu=cortex-m7 -mthumb -mfloat-abi=soft
# (A part with the single-precision FPU only, fpv5-sp-d16, links with the same hard-float ABI.)
# The shared body (compilers, search modes, link flags) is arm-none-eabi.cmake.
set(resplock_core cortex-m7)
set(resplock_core_fpu fpv5-d16)
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
