# Bare-metal Cortex-M0+ (ARMv6-M, no FPU: soft float only). Usage:
#   cmake -S . -B build/m0plus \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-none-eabi-cortex-m0plus.cmake
# Flags: -mcpu=cortex-m0plus -mthumb -mfloat-abi=soft -ffunction-sections -fdata-sections.
# ARMv6-M has no divide instruction: a division the code makes calls libgcc (__aeabi_uidiv...).
# The shared body (compilers, search modes, link flags) is arm-none-eabi.cmake.
set(resplock_core cortex-m0plus)
set(resplock_core_fpu "")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
