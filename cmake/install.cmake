# Install rules: headers, static libraries, the CLI, a CMake package (find_package(resplock)) and
# pkg-config files. Ports are installed when their targets exist in this build, so the same rules
# work with or without lwIP and mbedTLS.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Off by default when resplock is a subproject: the parent decides what it installs.
if(CMAKE_SOURCE_DIR STREQUAL PROJECT_SOURCE_DIR)
    set(resplock_install_default ON)
else()
    set(resplock_install_default OFF)
endif()
option(RESPLOCK_INSTALL "Generate the install rules" ${resplock_install_default})
if(NOT RESPLOCK_INSTALL)
    return()
endif()

set(RESPLOCK_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/resplock)
set(RESPLOCK_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set_target_properties(resplock PROPERTIES EXPORT_NAME resplock)

# Every public header, under include/resplock/ as in the source tree; the mock port's are for
# this project's tests (and yours, from the source tree) and are not installed.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/resplock
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp" PATTERN "mock.h*" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/include/resplock/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/resplock)
install(TARGETS resplock EXPORT resplock-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT resplock-targets NAMESPACE resplock:: DESTINATION ${RESPLOCK_CMAKE_DIR}
        FILE resplock-targets.cmake)

# pkg-config files are relocatable (paths relative to the .pc file), so `cmake --install --prefix`
# and DESTDIR give working files without reconfiguring.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(RESPLOCK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
    set(RESPLOCK_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
    file(RELATIVE_PATH up "/root/${RESPLOCK_PKGCONFIG_DIR}" "/root")
    set(RESPLOCK_PC_PREFIX "\${pcfiledir}/${up}")
    string(REGEX REPLACE "/$" "" RESPLOCK_PC_PREFIX "${RESPLOCK_PC_PREFIX}")
    set(RESPLOCK_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(RESPLOCK_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
    set(RESPLOCK_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# A coverage build's objects call gcov's run-time (cmake/coverage.cmake): its programs link it.
set(RESPLOCK_PC_COVERAGE "")
if(RESPLOCK_COVERAGE)
    set(RESPLOCK_PC_COVERAGE " --coverage")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/resplock.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/resplock.pc
               @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/resplock.pc DESTINATION ${RESPLOCK_PKGCONFIG_DIR})

# Ports: resplock::<port> in lib/cmake/resplock/resplock-<port>-targets.cmake and
# resplock-<port>.pc. Each port has its own export file so that a consumer without, say, lwIP can
# still use the POSIX port: the config file loads a port only when its dependency is found. An
# exported port links resplock::<port>_deps, which the config file defines on the consumer's
# machine with the installed resplock-dependencies.cmake.
set(RESPLOCK_INSTALLED_PORTS)
foreach(port posix lwip mbedtls transport)
    set(target resplock_${port})
    if(NOT TARGET ${target})
        continue()
    endif()
    list(APPEND RESPLOCK_INSTALLED_PORTS ${port})
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${port})
    install(TARGETS ${target} EXPORT resplock-${port}-targets
            ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
            LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
    install(EXPORT resplock-${port}-targets NAMESPACE resplock:: DESTINATION ${RESPLOCK_CMAKE_DIR}
            FILE resplock-${port}-targets.cmake)

    # What a pkg-config user needs besides the core (static libraries: dependencies in Libs).
    set(RESPLOCK_PC_PORT ${port})
    set(RESPLOCK_PC_REQUIRES "resplock = ${PROJECT_VERSION}")
    set(RESPLOCK_PC_LIBS "-lresplock_${port}")
    set(RESPLOCK_PC_CFLAGS "")
    if(port STREQUAL "lwip")
        # lwip.pc when the build found lwIP through it; otherwise the directories it used (none
        # when lwIP came from a target of the including build, RESPLOCK_LWIP_TARGET).
        if(RESPLOCK_PC_LWIP_FOUND)
            string(APPEND RESPLOCK_PC_REQUIRES ", lwip")
        elseif(RESPLOCK_LWIP_INCLUDE_DIR)
            string(APPEND RESPLOCK_PC_CFLAGS " -I${RESPLOCK_LWIP_INCLUDE_DIR}")
            if(RESPLOCK_LWIP_LIBRARY)
                string(APPEND RESPLOCK_PC_LIBS " ${RESPLOCK_LWIP_LIBRARY}")
            endif()
        endif()
        foreach(dir IN LISTS RESPLOCK_LWIP_EXTRA_INCLUDE_DIRS)
            string(APPEND RESPLOCK_PC_CFLAGS " -I${dir}")
        endforeach()
    elseif(port STREQUAL "mbedtls")
        string(APPEND RESPLOCK_PC_LIBS " -lmbedtls -lmbedx509 -lmbedcrypto")
    elseif(port STREQUAL "posix")
        string(APPEND RESPLOCK_PC_LIBS " -pthread")  # the renewal thread
    endif()
    configure_file(${CMAKE_CURRENT_LIST_DIR}/resplock-port.pc.in
                   ${PROJECT_BINARY_DIR}/pkgconfig/resplock-${port}.pc @ONLY)
    install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/resplock-${port}.pc
            DESTINATION ${RESPLOCK_PKGCONFIG_DIR})
endforeach()

# The tool, its man page (gzip -9n, as `make install` installs it) and its bash and zsh
# completions: component "cli", which the .deb holds (cmake/package.cmake).
if(TARGET resplock_cli)
    install(TARGETS resplock_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
    set(resplock_man ${PROJECT_SOURCE_DIR}/tools/resplock/resplock.1)
    set(resplock_man_gz ${PROJECT_BINARY_DIR}/man/resplock.1.gz)
    find_program(RESPLOCK_GZIP NAMES gzip)
    if(RESPLOCK_GZIP)
        add_custom_command(OUTPUT ${resplock_man_gz}
                           COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
                           COMMAND sh -c "\"$0\" -9n -c \"$1\" >\"$2\"" ${RESPLOCK_GZIP}
                                   ${resplock_man} ${resplock_man_gz}
                           DEPENDS ${resplock_man} VERBATIM)
        add_custom_target(resplock_man ALL DEPENDS ${resplock_man_gz})
        install(FILES ${resplock_man_gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT cli)
    else()
        install(FILES ${resplock_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT cli)
    endif()
    install(FILES ${PROJECT_SOURCE_DIR}/tools/resplock/completion/resplock.bash
            DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions
            RENAME resplock COMPONENT cli)
    install(FILES ${PROJECT_SOURCE_DIR}/tools/resplock/completion/_resplock
            DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/zsh/vendor-completions COMPONENT cli)
endif()

# Values the config file bakes in for the lwIP port (see resplock-config.cmake.in).
if(RESPLOCK_LWIP_LIBRARY)
    set(RESPLOCK_LWIP_LINKED TRUE)
else()
    set(RESPLOCK_LWIP_LINKED FALSE)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/resplock-config.cmake.in
                              ${PROJECT_BINARY_DIR}/cmake/resplock-config.cmake
                              INSTALL_DESTINATION ${RESPLOCK_CMAKE_DIR})
# 0.x: a new minor version may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/resplock-config-version.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/resplock-config.cmake
              ${PROJECT_BINARY_DIR}/cmake/resplock-config-version.cmake
              ${CMAKE_CURRENT_LIST_DIR}/resplock-dependencies.cmake
        DESTINATION ${RESPLOCK_CMAKE_DIR})
