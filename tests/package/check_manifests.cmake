# What can still drift from cmake/resplock-sources.cmake, the one source list (CMake, its ESP-IDF
# block and the Zephyr module include it; the Makefile reads it):
#   - the list against the tree: every listed file exists, every source file is listed, and no
#     two sources of one library archive share a name;
#   - the manifests that cannot include it: the versions in library.json and idf_component.yml,
#     and the files PlatformIO's srcFilter selects (core, variants, C API, lwIP port);
#   - the ESP-IDF block registers those, plus the mbedTLS port when asked;
#   - zephyr/Kconfig defines every CONFIG_RESPLOCK* symbol zephyr/CMakeLists.txt tests;
#   - every manifest names the licence of LICENSE (MIT);
#   - the ESP-IDF block sets C++17 for the component (PUBLIC on ESP-IDF 4.x, PRIVATE on 5.x);
#   - each manifest's structure against its format's documented schema, and the C++17 settings of
#     library.json and zephyr/Kconfig (check_manifest_schemas.py, run with python3).
#   cmake -DRESPLOCK_SOURCE_DIR=<repo> -P check_manifests.cmake
# Prints every problem, then fails if there was one.
cmake_minimum_required(VERSION 3.19)  # string(JSON)

if(NOT RESPLOCK_SOURCE_DIR)
    message(FATAL_ERROR "usage: cmake -DRESPLOCK_SOURCE_DIR=... -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
get_filename_component(root "${RESPLOCK_SOURCE_DIR}" ABSOLUTE)  # GLOB ... RELATIVE needs it
include("${root}/cmake/resplock-sources.cmake")
set(problems 0)
macro(problem text)
    message("FAIL: ${text}")
    math(EXPR problems "${problems} + 1")
endmacro()

# --- the source list against the tree ------------------------------------------------------------
set(listed)
foreach(list RESPLOCK_CORE_SOURCES RESPLOCK_VARIANT_SOURCES RESPLOCK_C_API_SOURCES
        RESPLOCK_POSIX_SOURCES RESPLOCK_LWIP_SOURCES RESPLOCK_LWIP_RAW_SOURCES
        RESPLOCK_MBEDTLS_SOURCES RESPLOCK_TRANSPORT_SOURCES
        RESPLOCK_MOCK_SOURCES RESPLOCK_CLI_SOURCES)
    foreach(f IN LISTS ${list})
        if(NOT EXISTS "${root}/${f}")
            problem("${list} lists ${f}, which does not exist")
        endif()
        list(APPEND listed ${f})
    endforeach()
endforeach()
file(GLOB_RECURSE on_disk RELATIVE "${root}" "${root}/src/*.cpp" "${root}/ports/*.c"
     "${root}/ports/*.cpp" "${root}/tools/resplock/*.cpp")
foreach(f IN LISTS on_disk)
    if(NOT f IN_LIST listed)
        problem("${f} is in no list of cmake/resplock-sources.cmake")
    endif()
endforeach()
list(LENGTH listed n)
message("ok: cmake/resplock-sources.cmake lists ${n} sources")
# One archive (the Makefile's libresplock.a holds the library and the POSIX port) keeps its
# objects by base name: two sources of one name would make two members of one name.
set(names)
foreach(f IN LISTS RESPLOCK_CORE_SOURCES RESPLOCK_VARIANT_SOURCES RESPLOCK_C_API_SOURCES
        RESPLOCK_POSIX_SOURCES)
    get_filename_component(name "${f}" NAME_WE)
    if(name IN_LIST names)
        problem("two library sources are named ${name}: their objects would clash in an archive")
    endif()
    list(APPEND names ${name})
endforeach()

# --- versions -------------------------------------------------------------------------------------
file(READ "${root}/idf_component.yml" idf_manifest)
if(NOT idf_manifest MATCHES "(^|\n)version: *\"?([^\"\n]+)\"?")
    problem("idf_component.yml has no version")
elseif(NOT CMAKE_MATCH_2 STREQUAL RESPLOCK_VERSION)
    problem("idf_component.yml version ${CMAKE_MATCH_2} is not the project's ${RESPLOCK_VERSION}")
endif()
file(READ "${root}/library.json" pio)
string(JSON pio_version ERROR_VARIABLE err GET "${pio}" version)
if(err OR NOT pio_version STREQUAL RESPLOCK_VERSION)
    problem("library.json version '${pio_version}' is not the project's ${RESPLOCK_VERSION}")
endif()

# --- the licence every manifest names ------------------------------------------------------------
file(READ "${root}/LICENSE" license_text)
if(NOT license_text MATCHES "^MIT License")
    problem("LICENSE is not the MIT licence the manifests name")
endif()
string(JSON pio_license ERROR_VARIABLE err GET "${pio}" license)
if(err OR NOT pio_license STREQUAL "MIT")
    problem("library.json names licence '${pio_license}', not MIT")
endif()
if(NOT idf_manifest MATCHES "(^|\n)license: *\"MIT\"")
    problem("idf_component.yml does not name the MIT licence")
endif()
file(READ "${root}/zephyr/module.yml" zephyr_module)
if(NOT zephyr_module MATCHES "SPDX-License-Identifier: MIT")
    problem("zephyr/module.yml does not name the MIT licence")
endif()

# --- PlatformIO: the files build.srcFilter selects ------------------------------------------------
string(JSON filter_count ERROR_VARIABLE err LENGTH "${pio}" build srcFilter)
if(err)
    problem("library.json: build.srcFilter is not a list: ${err}")
    set(filter_count 0)
endif()
set(pio_files)
if(filter_count GREATER 0)
    math(EXPR last "${filter_count} - 1")
    foreach(i RANGE ${last})
        string(JSON entry GET "${pio}" build srcFilter ${i})
        if(NOT entry MATCHES "^\\+<(.+)>$")
            problem("library.json: srcFilter entry '${entry}' is not +<...>")
            continue()
        endif()
        file(GLOB_RECURSE matched RELATIVE "${root}" "${root}/${CMAKE_MATCH_1}/*.c"
             "${root}/${CMAKE_MATCH_1}/*.cpp")
        list(APPEND pio_files ${matched})
    endforeach()
endif()
set(expected ${RESPLOCK_CORE_SOURCES} ${RESPLOCK_VARIANT_SOURCES} ${RESPLOCK_C_API_SOURCES}
    ${RESPLOCK_LWIP_SOURCES})
list(SORT pio_files)
list(SORT expected)
if(NOT pio_files STREQUAL expected)
    problem("library.json builds [${pio_files}], not [${expected}]")
endif()

# --- ESP-IDF: the if(ESP_PLATFORM) block of the top CMakeLists.txt, evaluated with a recorder ---
function(idf_component_register)
    cmake_parse_arguments(arg "" "" "SRCS;INCLUDE_DIRS;PRIV_INCLUDE_DIRS;REQUIRES" ${ARGN})
    set(idf_srcs "${arg_SRCS}" PARENT_SCOPE)
endfunction()
# Not scriptable in -P mode, so recorded too: the options the block gives the component.
function(target_compile_options target)
    set(idf_options "${target};${ARGN}" PARENT_SCOPE)
endfunction()
set(ESP_PLATFORM 1)
set(COMPONENT_LIB idf::resplock)
foreach(idf_major 4 5)
    foreach(with_mbedtls OFF ON)
        set(IDF_VERSION_MAJOR ${idf_major})
        set(RESPLOCK_WITH_MBEDTLS ${with_mbedtls})
        set(idf_srcs)
        set(idf_options)
        include("${root}/CMakeLists.txt")
        set(want ${expected})
        if(with_mbedtls)
            list(APPEND want ${RESPLOCK_MBEDTLS_SOURCES})
        endif()
        list(SORT idf_srcs)
        list(SORT want)
        if(NOT idf_srcs STREQUAL want)
            problem("ESP-IDF (RESPLOCK_WITH_MBEDTLS=${with_mbedtls}) builds [${idf_srcs}]")
        endif()
        # 4.x compiles C++ as gnu++11, which cannot read the C++ headers: C++17 must reach the
        # components that include them (PUBLIC). 5.x's default reads them: PRIVATE suffices.
        if(idf_major LESS 5)
            set(scope PUBLIC)
        else()
            set(scope PRIVATE)
        endif()
        set(want_options "idf::resplock;${scope};$<$<COMPILE_LANGUAGE:CXX>:-std=gnu++17>")
        if(NOT idf_options STREQUAL want_options)
            problem("ESP-IDF ${idf_major}.x: options [${idf_options}], not ${scope} -std=gnu++17")
        endif()
    endforeach()
endforeach()
unset(ESP_PLATFORM)

# --- Zephyr ---------------------------------------------------------------------------------------
file(READ "${root}/zephyr/CMakeLists.txt" zephyr_cmake)
file(READ "${root}/zephyr/Kconfig" zephyr_kconfig)
string(REGEX MATCHALL "CONFIG_RESPLOCK[A-Z0-9_]*" zephyr_symbols "${zephyr_cmake}")
list(REMOVE_DUPLICATES zephyr_symbols)
foreach(sym IN LISTS zephyr_symbols)
    string(REGEX REPLACE "^CONFIG_" "" name "${sym}")
    if(NOT zephyr_kconfig MATCHES "(^|\n)config ${name}\n")
        problem("zephyr/CMakeLists.txt uses ${sym}, which zephyr/Kconfig does not define")
    endif()
endforeach()

# --- each manifest against its format's schema ----------------------------------------------------
find_program(python3 NAMES python3)
if(NOT python3)
    problem("python3 not found: the manifests' schemas are not checked")
else()
    execute_process(COMMAND "${python3}" "${CMAKE_CURRENT_LIST_DIR}/check_manifest_schemas.py"
                            "${root}" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        problem("check_manifest_schemas.py: see above")
    endif()
endif()

if(problems GREATER 0)
    message(FATAL_ERROR "${problems} problem(s) in the source list or the manifests")
endif()
message("ok: the source list, the manifests' versions, sources, licence, C++17 and schemas")
