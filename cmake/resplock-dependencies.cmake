# The third-party libraries of the optional ports, found in one place for both users: the build
# (ports/<port>/CMakeLists.txt) and an installed package (resplock-config.cmake, which installs
# this file next to itself). Each found dependency becomes an IMPORTED INTERFACE target,
# resplock::<port>_deps, that the port links; an exported port names only that target, so the
# paths found on the build machine never end up in the package.
include_guard(GLOBAL)

# resplock_find_lwip(<found-var> [REQUIRE_LIBRARY <bool>])
# lwIP is found through pkg-config (lwip.pc, e.g. Debian's liblwip-dev) or from
# RESPLOCK_LWIP_INCLUDE_DIR (the directory holding lwip/sockets.h); RESPLOCK_LWIP_EXTRA_INCLUDE_DIRS
# adds the directories of lwipopts.h and arch/ when they live elsewhere, as in most firmware trees.
# On firmware the application builds lwIP itself, so liblwip is linked only when one is found;
# REQUIRE_LIBRARY makes it a requirement (a package built against liblwip needs one).
function(resplock_find_lwip found_var)
    cmake_parse_arguments(PARSE_ARGV 1 arg "" "REQUIRE_LIBRARY" "")
    set(${found_var} FALSE PARENT_SCOPE)
    if(TARGET resplock::lwip_deps)
        set(${found_var} TRUE PARENT_SCOPE)
        return()
    endif()
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
        pkg_check_modules(RESPLOCK_PC_LWIP QUIET lwip)
    endif()
    find_path(RESPLOCK_LWIP_INCLUDE_DIR lwip/sockets.h
              HINTS ${RESPLOCK_PC_LWIP_INCLUDE_DIRS} PATH_SUFFIXES lwip
              DOC "Directory holding lwip/sockets.h")
    find_library(RESPLOCK_LWIP_LIBRARY lwip HINTS ${RESPLOCK_PC_LWIP_LIBRARY_DIRS}
                 DOC "The lwIP library to link, if there is one (not needed on firmware)")
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
# mbedTLS: its headers and the mbedtls, mbedx509 and mbedcrypto libraries, all required.
function(resplock_find_mbedtls found_var)
    set(${found_var} FALSE PARENT_SCOPE)
    if(TARGET resplock::mbedtls_deps)
        set(${found_var} TRUE PARENT_SCOPE)
        return()
    endif()
    find_path(RESPLOCK_MBEDTLS_INCLUDE_DIR mbedtls/ssl.h)
    find_library(RESPLOCK_MBEDTLS_LIBRARY mbedtls)
    find_library(RESPLOCK_MBEDX509_LIBRARY mbedx509)
    find_library(RESPLOCK_MBEDCRYPTO_LIBRARY mbedcrypto)
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
