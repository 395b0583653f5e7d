# Bare-metal Cortex-M4 (ARMv7E-M). Usage:
#   cmake -S . -B build/m4 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-none-eabi-cortex-m4.cmake
#         [-DRESPLOCK_FLOAT_ABI=soft]
# RESPLOCK_FLOAT_ABI picks the calling convention, which must match the firmware's:
#   hard (default)  -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard
#   soft            -mcpu=cortex-m4 -mthumb -mfloat-abi=soft
# The shared body (compilers, search modes, link flags) is arm-none-eabi.cmake.
set(resplock_core cortex-m4)
set(resplock_core_fpu fpv4-sp-d16)
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
