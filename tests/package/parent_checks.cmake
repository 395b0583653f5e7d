# Included by the parent projects of tests/package (subdirectory/, fetchcontent/) once resplock is
# in: every name of EXPECTED_TARGETS is an alias of one of resplock's libraries, named as in the
# installed package, and a subproject builds neither the tool, the tests nor the mock port, nor
# installs anything by default.
foreach(target IN LISTS EXPECTED_TARGETS)
    if(NOT TARGET ${target})
        message(FATAL_ERROR "${target} is missing")
    endif()
    get_target_property(real ${target} ALIASED_TARGET)
    if(NOT real)
        message(FATAL_ERROR "${target} is not an alias")
    endif()
    message(STATUS "parent: ${target} -> ${real}")
endforeach()
foreach(target resplock_cli resplock_mock resplock::mock)
    if(TARGET ${target})
        message(FATAL_ERROR "${target} is built in a subproject")
    endif()
endforeach()
foreach(option RESPLOCK_BUILD_TESTS RESPLOCK_BUILD_TOOLS RESPLOCK_INSTALL)
    if(${option})
        message(FATAL_ERROR "${option} is ON in a subproject")
    endif()
endforeach()
