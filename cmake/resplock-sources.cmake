# The one list of resplock's sources, per component, with the version and the warning flags.
# Included by CMakeLists.txt, its ESP-IDF block and zephyr/CMakeLists.txt; the Makefile reads the
# same lists (keep one `set(` per list, one path per line, `)` alone on the last line). Paths are
# relative to the repository root; RESPLOCK_ROOT is that root.
get_filename_component(RESPLOCK_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

set(RESPLOCK_VERSION
    0.2.0
)

# What every lock kind builds on: the RESP codec, the connection and the Observer it calls, the
# plain lock and the rules all lock kinds share (validity, tokens, scripts, the wait). A firmware
# links only the functions it calls; the Cortex-M4 core budget counts those of a plain-lock
# firmware, from its link map (tests/target): the Observer only if the firmware makes one.
set(RESPLOCK_CORE_SOURCES
    src/core/resp.cpp
    src/core/connection.cpp
    src/core/observer.cpp
    src/core/validity.cpp
    src/core/token.cpp
    src/core/script.cpp
    src/core/retry.cpp
    src/core/companion.cpp
    src/core/lock.cpp
    src/core/write_check.cpp
)

# Optional lock semantics and routers (src/ha/: Redis Sentinel, Cluster): each object is linked
# only if the program calls it.
set(RESPLOCK_VARIANT_SOURCES
    src/variants/reentrant_lock.cpp
    src/variants/quorum_lock.cpp
    src/variants/renewer.cpp
    src/variants/fair_lock.cpp
    src/variants/semaphore.cpp
    src/ha/cluster.cpp
    src/ha/sentinel.cpp
)

# The C API over the above, and the status texts (resplock_status_str).
set(RESPLOCK_C_API_SOURCES
    src/c_api/lock_c.cpp
    src/c_api/options_c.cpp
    src/c_api/reentrant_c.cpp
    src/c_api/quorum_c.cpp
    src/c_api/renewer_c.cpp
    src/c_api/observer_c.cpp
    src/c_api/fair_c.cpp
    src/c_api/semaphore_c.cpp
    src/c_api/cluster_c.cpp
    src/c_api/sentinel_c.cpp
    src/c_api/status_c.cpp
)

# Ports (each its own library) and what needs a POSIX system beyond the port.
set(RESPLOCK_POSIX_SOURCES
    ports/posix/posix.cpp
    src/posix/renewer_thread.cpp
)
set(RESPLOCK_LWIP_SOURCES
    ports/lwip/lwip.c
)
set(RESPLOCK_TRANSPORT_SOURCES
    ports/transport/transport.c
)
# lwIP's raw/callback API (NO_SYS=1 super-loops): built into firmware (tests/board); a host build
# only compile-checks it.
set(RESPLOCK_LWIP_RAW_SOURCES
    ports/lwip_raw/lwip_raw.c
)
set(RESPLOCK_MBEDTLS_SOURCES
    ports/mbedtls/mbedtls.c
)
set(RESPLOCK_MOCK_SOURCES
    ports/mock/mock.cpp
)

# The resplock command-line tool (POSIX): main.cpp and the units it is made of (CMake builds the
# units as a library that tests/cli links too).
set(RESPLOCK_CLI_SOURCES
    tools/resplock/main.cpp
    tools/resplock/args.cpp
    tools/resplock/commands.cpp
    tools/resplock/exit_codes.cpp
    tools/resplock/failure.cpp
    tools/resplock/guardian.cpp
    tools/resplock/inspect.cpp
    tools/resplock/json_text.cpp
    tools/resplock/list.cpp
    tools/resplock/messages.cpp
    tools/resplock/process_group.cpp
    tools/resplock/routing.cpp
    tools/resplock/status.cpp
    tools/resplock/supervisor.cpp
    tools/resplock/text.cpp
    tools/resplock/tls.cpp
    tools/resplock/url.cpp
    tools/resplock/usage.cpp
    tools/resplock/view_output.cpp
)

# Warnings every library source is held to; our own builds (RESPLOCK_WERROR, scripts/test.sh)
# make them errors, a consumer's build never does. Library code builds without exceptions and RTTI.
set(RESPLOCK_WARNING_FLAGS
    -Wall
    -Wextra
    -Wpedantic
    -Wconversion
    -Wshadow
)
set(RESPLOCK_CXX_FLAGS
    -fno-exceptions
    -fno-rtti
)
