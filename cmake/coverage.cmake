# Line and branch coverage (gcov) of the library and its ports, for scripts/coverage.sh
# (docs/testing.md, "Coverage"). Only their objects are instrumented: not the tool's own units,
# the mock port or the tests. Every program that links one of them links gcov's run-time too
# (an interface link option; a package installed from such a build carries it as well, see
# cmake/install.cmake). Each instrumented program writes its counts (.gcda) next to the objects
# when it exits.
option(RESPLOCK_COVERAGE "Instrument the library and its ports for gcov (scripts/coverage.sh)" OFF)
if(RESPLOCK_COVERAGE)
    foreach(target resplock resplock_posix resplock_lwip resplock_lwip_raw resplock_mbedtls
                   resplock_transport)
        if(TARGET ${target})
            # Atomic counters: the renewal thread and the tests' threads run library code at the
            # same time, and racing increments leave counts gcov cannot read (negative branches).
            target_compile_options(${target} PRIVATE --coverage -fprofile-update=atomic)
            target_link_options(${target} INTERFACE --coverage)
        endif()
    endforeach()
endif()
