# A Debian package of the command-line tool, built by CPack (`cpack -G DEB` in a build folder):
# package "resplock" with bin/resplock, its man page, the bash and zsh completions (install
# component "cli", cmake/install.cmake) and /usr/share/doc/resplock/copyright and changelog.gz.
# The library and headers are not in it. Included only when resplock is the top-level project and
# the tool is built. tests/package/deb.sh builds it and runs lintian on it (package.deb).
if(NOT CMAKE_SOURCE_DIR STREQUAL PROJECT_SOURCE_DIR OR NOT TARGET resplock_cli OR
   NOT RESPLOCK_INSTALL)
    return()
endif()

# /usr/share/doc/resplock/copyright in Debian's machine-readable format, from LICENSE: its
# "Copyright (c) YEAR HOLDER" line and the licence text, each line indented, blank ones as " .".
file(STRINGS ${PROJECT_SOURCE_DIR}/LICENSE resplock_license_lines)
set(resplock_copyright_holder)
set(resplock_license_text)
set(resplock_in_text FALSE)
foreach(line IN LISTS resplock_license_lines)
    if(NOT resplock_copyright_holder AND line MATCHES "^Copyright \\(c\\) (.+)$")
        set(resplock_copyright_holder "${CMAKE_MATCH_1}")
        set(resplock_in_text TRUE)
        continue()
    endif()
    if(NOT resplock_in_text)
        continue()
    endif()
    if(line STREQUAL "")
        string(APPEND resplock_license_text " .\n")
    else()
        string(APPEND resplock_license_text " ${line}\n")
    endif()
endforeach()
string(REGEX REPLACE "^ \\.\n" "" resplock_license_text "${resplock_license_text}")
string(REGEX REPLACE "( \\.\n)+$" "" resplock_license_text "${resplock_license_text}")
if(NOT resplock_copyright_holder)
    message(FATAL_ERROR "LICENSE has no 'Copyright (c) ...' line for the package's copyright file")
endif()
set(resplock_doc_dir ${PROJECT_BINARY_DIR}/deb-doc)
file(WRITE ${resplock_doc_dir}/copyright
     "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
     "Upstream-Name: resplock\n"
     "\n"
     "Files: *\n"
     "Copyright: ${resplock_copyright_holder}\n"
     "License: Expat\n"
     "\n"
     "License: Expat\n"
     "${resplock_license_text}")

# changelog.gz: a package whose version has no Debian revision is native, and its changelog.gz
# is read as a Debian changelog. One entry for this version, pointing at CHANGELOG.md's notes; its
# date honours SOURCE_DATE_EPOCH, so a rebuild gives the same file.
set(RESPLOCK_DEB_MAINTAINER "resplock maintainers <resplock@users.noreply.invalid>"
    CACHE STRING "The Maintainer field of the .deb")
string(TIMESTAMP resplock_deb_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE ${resplock_doc_dir}/changelog
     "resplock (${PROJECT_VERSION}) unstable; urgency=medium\n"
     "\n"
     "  * resplock ${PROJECT_VERSION}; the changes are listed in CHANGELOG.md of the\n"
     "    source tree.\n"
     "\n"
     " -- ${RESPLOCK_DEB_MAINTAINER}  ${resplock_deb_date}\n")
find_program(RESPLOCK_GZIP NAMES gzip)
if(RESPLOCK_GZIP)
    add_custom_command(OUTPUT ${resplock_doc_dir}/changelog.gz
                       COMMAND sh -c "\"$0\" -9n -c \"$1\" >\"$2\"" ${RESPLOCK_GZIP}
                               ${resplock_doc_dir}/changelog ${resplock_doc_dir}/changelog.gz
                       DEPENDS ${resplock_doc_dir}/changelog VERBATIM)
    add_custom_target(resplock_deb_changelog ALL DEPENDS ${resplock_doc_dir}/changelog.gz)
    install(FILES ${resplock_doc_dir}/changelog.gz DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/resplock
            COMPONENT cli)
endif()
install(FILES ${resplock_doc_dir}/copyright DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/resplock
        COMPONENT cli)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME resplock)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${RESPLOCK_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "distributed lock over Redis for shell scripts and cron jobs")
# The extended description: lines of at most 80 characters (lintian).
set(CPACK_PACKAGE_DESCRIPTION
    "resplock takes, releases, extends and inspects a lock kept on a Redis\n"
    "server, and runs a command while holding it: like flock(1), but shared by\n"
    "every host that reaches the same server. It also offers fencing numbers,\n"
    "once-per-interval runs, a fair queue, counting semaphores, quorum locks\n"
    "over several servers, Redis Cluster and Sentinel, and TLS.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL cli)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_DEBIAN_PACKAGE_NAME resplock)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
# Dependencies from the binary's shared libraries (dpkg-shlibdeps, from dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Files installed by dpkg are owned by root, directories 0755.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
