# The third-party libraries of the optional ports, found in one place for both users: the build
# (ports/<port>/CMakeLists.txt) and an installed package (resplock-config.cmake, which installs
# this file next to itself). Each found dependency becomes an IMPORTED INTERFACE target,
# resplock::<port>_deps, that the port links; an exported port names only that target, so the
# paths found on the build machine never end up in the package.
include_guard(GLOBAL)

# In a cross build the host's headers and libraries (/usr/include, /usr/lib, the host's
# pkg-config) are never used: a cross build finds its dependencies only where the user points.

# resplock_find_lwip(<found-var> [REQUIRE_LIBRARY <bool>])
# lwIP comes from, in this order: RESPLOCK_LWIP_TARGET, a target of the user's build that carries
# lwIP's include directories (e.g. lwIP's own lwipcore, or the firmware's lwIP library); the
# directory RESPLOCK_LWIP_INCLUDE_DIR, holding lwip/sockets.h; and, in a native build only,
# pkg-config (lwip.pc, e.g. Debian's liblwip-dev) or the system's include directories.
# RESPLOCK_LWIP_EXTRA_INCLUDE_DIRS adds the directories of lwipopts.h and arch/ when they live
# elsewhere, as in most firmware trees. On firmware the application builds lwIP itself, so liblwip
# is linked only when one is found; REQUIRE_LIBRARY makes it a requirement (a package built against
# liblwip needs one).
function(resplock_find_lwip found_var)
    cmake_parse_arguments(PARSE_ARGV 1 arg "" "REQUIRE_LIBRARY" "")
    set(${found_var} FALSE PARENT_SCOPE)
    if(TARGET resplock::lwip_deps)
        set(${found_var} TRUE PARENT_SCOPE)
        return()
    endif()
    if(RESPLOCK_LWIP_TARGET)
        if(NOT TARGET ${RESPLOCK_LWIP_TARGET})
            message(FATAL_ERROR "RESPLOCK_LWIP_TARGET: no target ${RESPLOCK_LWIP_TARGET}")
        endif()
        add_library(resplock::lwip_deps INTERFACE IMPORTED)
        target_link_libraries(resplock::lwip_deps INTERFACE ${RESPLOCK_LWIP_TARGET})
        target_include_directories(resplock::lwip_deps SYSTEM INTERFACE
                                   ${RESPLOCK_LWIP_EXTRA_INCLUDE_DIRS})
        set(${found_var} TRUE PARENT_SCOPE)
        return()
    endif()
    if(CMAKE_CROSSCOMPILING)
        # Only the directories given: RESPLOCK_LWIP_INCLUDE_DIR is used as it is, never searched.
        set(RESPLOCK_LWIP_INCLUDE_DIR "${RESPLOCK_LWIP_INCLUDE_DIR}" CACHE PATH
            "Directory holding lwip/sockets.h")
        set(RESPLOCK_LWIP_LIBRARY "${RESPLOCK_LWIP_LIBRARY}" CACHE FILEPATH
            "The lwIP library to link, if there is one (not needed on firmware)")
        if(RESPLOCK_LWIP_INCLUDE_DIR AND NOT EXISTS "${RESPLOCK_LWIP_INCLUDE_DIR}/lwip/sockets.h")
            message(FATAL_ERROR "RESPLOCK_LWIP_INCLUDE_DIR (${RESPLOCK_LWIP_INCLUDE_DIR}) has no "
                                "lwip/sockets.h")
        endif()
    else()
        find_package(PkgConfig QUIET)
        if(PKG_CONFIG_FOUND)
            pkg_check_modules(RESPLOCK_PC_LWIP QUIET lwip)
        endif()
        find_path(RESPLOCK_LWIP_INCLUDE_DIR lwip/sockets.h
                  HINTS ${RESPLOCK_PC_LWIP_INCLUDE_DIRS} PATH_SUFFIXES lwip
                  DOC "Directory holding lwip/sockets.h")
        find_library(RESPLOCK_LWIP_LIBRARY lwip HINTS ${RESPLOCK_PC_LWIP_LIBRARY_DIRS}
                     DOC "The lwIP library to link, if there is one (not needed on firmware)")
    endif()
    if(NOT RESPLOCK_LWIP_INCLUDE_DIR OR (arg_REQUIRE_LIBRARY AND NOT RESPLOCK_LWIP_LIBRARY))
        return()
    endif()
    add_library(resplock::lwip_deps INTERFACE IMPORTED)
    # SYSTEM: lwIP's own headers are not held to our warning flags.
    target_include_directories(resplock::lwip_deps SYSTEM INTERFACE ${RESPLOCK_LWIP_INCLUDE_DIR}
                               ${RESPLOCK_LWIP_EXTRA_INCLUDE_DIRS})
    if(RESPLOCK_LWIP_LIBRARY)
        target_link_libraries(resplock::lwip_deps INTERFACE ${RESPLOCK_LWIP_LIBRARY})
    endif()
    set(${found_var} TRUE PARENT_SCOPE)
endfunction()

# resplock_find_mbedtls(<found-var>)
# mbedTLS: RESPLOCK_MBEDTLS_TARGET, a target of the user's build that gives mbedTLS's headers and
# libraries (e.g. mbedTLS's own mbedtls target, which links mbedx509 and mbedcrypto); otherwise its
# headers and the mbedtls, mbedx509 and mbedcrypto libraries, all required, searched in the
# system's directories in a native build and only under CMAKE_PREFIX_PATH (or given directly as
# RESPLOCK_MBEDTLS_INCLUDE_DIR and RESPLOCK_MBED*_LIBRARY) in a cross build.
function(resplock_find_mbedtls found_var)
    set(${found_var} FALSE PARENT_SCOPE)
    if(TARGET resplock::mbedtls_deps)
        set(${found_var} TRUE PARENT_SCOPE)
        return()
    endif()
    if(RESPLOCK_MBEDTLS_TARGET)
        if(NOT TARGET ${RESPLOCK_MBEDTLS_TARGET})
            message(FATAL_ERROR "RESPLOCK_MBEDTLS_TARGET: no target ${RESPLOCK_MBEDTLS_TARGET}")
        endif()
        add_library(resplock::mbedtls_deps INTERFACE IMPORTED)
        target_link_libraries(resplock::mbedtls_deps INTERFACE ${RESPLOCK_MBEDTLS_TARGET})
        set(${found_var} TRUE PARENT_SCOPE)
        return()
    endif()
    set(where)
    if(CMAKE_CROSSCOMPILING)
        set(where NO_CMAKE_SYSTEM_PATH NO_SYSTEM_ENVIRONMENT_PATH)
    endif()
    find_path(RESPLOCK_MBEDTLS_INCLUDE_DIR mbedtls/ssl.h ${where})
    find_library(RESPLOCK_MBEDTLS_LIBRARY mbedtls ${where})
    find_library(RESPLOCK_MBEDX509_LIBRARY mbedx509 ${where})
    find_library(RESPLOCK_MBEDCRYPTO_LIBRARY mbedcrypto ${where})
    if(NOT (RESPLOCK_MBEDTLS_INCLUDE_DIR AND RESPLOCK_MBEDTLS_LIBRARY
            AND RESPLOCK_MBEDX509_LIBRARY AND RESPLOCK_MBEDCRYPTO_LIBRARY))
        return()
    endif()
    add_library(resplock::mbedtls_deps INTERFACE IMPORTED)
    target_include_directories(resplock::mbedtls_deps SYSTEM INTERFACE
                               ${RESPLOCK_MBEDTLS_INCLUDE_DIR})
    target_link_libraries(resplock::mbedtls_deps INTERFACE ${RESPLOCK_MBEDTLS_LIBRARY}
                          ${RESPLOCK_MBEDX509_LIBRARY} ${RESPLOCK_MBEDCRYPTO_LIBRARY})
    set(${found_var} TRUE PARENT_SCOPE)
endfunction()
