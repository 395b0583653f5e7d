# Shared body of the bare-metal Cortex-M toolchain files (arm-none-eabi-cortex-<core>.cmake): not
# a toolchain file on its own. The including file sets
#   resplock_core            the -mcpu name (cortex-m0plus, cortex-m4, cortex-m7, cortex-m33)
#   resplock_core_fpu        the -mfpu of the hard-float ABI; empty for a core without an FPU
# and gets RESPLOCK_FLOAT_ABI, a cache option (hard or soft; a core without an FPU takes soft
# only), which must match the firmware the library is linked into (a mismatch fails the link with
# "uses VFP register arguments"). Debian: gcc-arm-none-eabi, libnewlib-arm-none-eabi,
# libstdc++-arm-none-eabi-newlib; the Arm GNU Toolchain takes the same flags.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)

if(resplock_core_fpu)
    set(RESPLOCK_FLOAT_ABI hard CACHE STRING "${resplock_core} floating-point ABI: hard or soft")
    set_property(CACHE RESPLOCK_FLOAT_ABI PROPERTY STRINGS hard soft)
else()
    set(RESPLOCK_FLOAT_ABI soft CACHE STRING "${resplock_core} floating-point ABI: soft (no FPU)")
    set_property(CACHE RESPLOCK_FLOAT_ABI PROPERTY STRINGS soft)
endif()
# CMake's compiler checks run in projects of their own, which see this file but not the cache.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES RESPLOCK_FLOAT_ABI)
if(RESPLOCK_FLOAT_ABI STREQUAL "hard" AND resplock_core_fpu)
    set(resplock_arch_flags
        "-mcpu=${resplock_core} -mthumb -mfpu=${resplock_core_fpu} -mfloat-abi=hard")
elseif(RESPLOCK_FLOAT_ABI STREQUAL "soft")
    set(resplock_arch_flags "-mcpu=${resplock_core} -mthumb -mfloat-abi=soft")
elseif(resplock_core_fpu)
    message(FATAL_ERROR "RESPLOCK_FLOAT_ABI must be hard or soft, not '${RESPLOCK_FLOAT_ABI}'")
else()
    message(FATAL_ERROR
            "RESPLOCK_FLOAT_ABI must be soft on the ${resplock_core} (no FPU), not "
            "'${RESPLOCK_FLOAT_ABI}'")
endif()

# One section per function and per object, so that a firmware linked with -Wl,--gc-sections keeps
# only the functions it calls. Programs link against newlib-nano with the nosys stubs: enough for
# CMake's compiler checks and for a firmware that brings its own start-up code and linker script.
set(CMAKE_C_FLAGS_INIT "${resplock_arch_flags} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${resplock_arch_flags} -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${resplock_arch_flags}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nano.specs --specs=nosys.specs -Wl,--gc-sections")

# Programs (the compilers, pkg-config) are the host's; headers, libraries and packages never are.
# resplock's own search for lwIP and mbedTLS ignores the host's directories in any cross build
# (cmake/resplock-dependencies.cmake): point it at them (RESPLOCK_LWIP_INCLUDE_DIR,
# RESPLOCK_LWIP_EXTRA_INCLUDE_DIRS, CMAKE_PREFIX_PATH) or at targets of your build.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
