# Bare-metal Cortex-M4 with the GNU Arm Embedded toolchain (Debian: gcc-arm-none-eabi,
# libnewlib-arm-none-eabi, libstdc++-arm-none-eabi-newlib). Usage:
#   cmake -S . -B build/m4 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-none-eabi-cortex-m4.cmake
#         [-DRESPLOCK_FLOAT_ABI=soft]
# RESPLOCK_FLOAT_ABI picks the calling convention, which must match the firmware the library is
# linked into (a mismatch fails the link with "uses VFP register arguments"):
#   hard (default)  -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard
#   soft            -mcpu=cortex-m4 -mthumb -mfloat-abi=soft
# Both add -ffunction-sections -fdata-sections, so a firmware linked with -Wl,--gc-sections keeps
# only the functions it calls. Programs link against newlib-nano with the nosys stubs
# (--specs=nano.specs --specs=nosys.specs): enough for CMake's compiler checks and for a firmware
# that brings its own start-up code and linker script.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)

set(RESPLOCK_FLOAT_ABI hard CACHE STRING "Cortex-M4 floating-point ABI: hard or soft")
set_property(CACHE RESPLOCK_FLOAT_ABI PROPERTY STRINGS hard soft)
# CMake's compiler checks run in projects of their own, which see this file but not the cache.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES RESPLOCK_FLOAT_ABI)
if(RESPLOCK_FLOAT_ABI STREQUAL "hard")
    set(resplock_arch_flags "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
elseif(RESPLOCK_FLOAT_ABI STREQUAL "soft")
    set(resplock_arch_flags "-mcpu=cortex-m4 -mthumb -mfloat-abi=soft")
else()
    message(FATAL_ERROR "RESPLOCK_FLOAT_ABI must be hard or soft, not '${RESPLOCK_FLOAT_ABI}'")
endif()

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
