# 32-bit ARM Linux (ARMv7, hard float) with Debian's cross compiler. CTest runs the test binaries
# through qemu-arm (user-mode emulation), which finds the ARM C and C++ run-time libraries under
# /usr/arm-linux-gnueabihf. Usage:
#   cmake -S . -B build/arm-linux -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm-linux-gnueabihf.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(RESPLOCK_CROSS_TRIPLE arm-linux-gnueabihf)
set(RESPLOCK_CROSS_SYSROOT /usr/${RESPLOCK_CROSS_TRIPLE})

set(CMAKE_C_COMPILER ${RESPLOCK_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${RESPLOCK_CROSS_TRIPLE}-g++)

find_program(RESPLOCK_QEMU_ARM qemu-arm)
if(RESPLOCK_QEMU_ARM)
    set(CMAKE_CROSSCOMPILING_EMULATOR ${RESPLOCK_QEMU_ARM} -L ${RESPLOCK_CROSS_SYSROOT})
endif()

# Libraries and headers come from the ARM tree only (never the host's x86 ones); programs such as
# redis-server, openssl or pkg-config are the host's.
set(CMAKE_FIND_ROOT_PATH ${RESPLOCK_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config must not report the host's libraries either: only armhf multiarch ones, if installed.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${RESPLOCK_CROSS_TRIPLE}/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
