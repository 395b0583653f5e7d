# Bare-metal Cortex-M33 (ARMv8-M Mainline, single-precision FPU). Usage:
#   cmake -S . -B build/m33 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-none-eabi-cortex-m33.cmake
#         [-DRESPLOCK_FLOAT_ABI=soft]
# RESPLOCK_FLOAT_ABI picks the calling convention, which must match the firmware's:
#   hard (default)  -mcpu=cortex-m33 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard
#   soft            -mcpu=cortex-m33 -mthumb -mfloat-abi=soft
# The library is plain (non-secure or secure-only) code: no -mcmse, no secure gateways.
# The shared body (compilers, search modes, link flags) is arm-none-eabi.cmake.
set(resplock_core cortex-m33)
set(resplock_core_fpu fpv5-sp-d16)
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
