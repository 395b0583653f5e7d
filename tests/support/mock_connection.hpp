// A Connection over the mock port, the base of the unit tests' fixtures: the mock (its script and
// fake clock), its port, the buffer and the config, all reachable by the test.
#ifndef RESPLOCK_TESTS_MOCK_CONNECTION_HPP
#define RESPLOCK_TESTS_MOCK_CONNECTION_HPP

#include <cstddef>
#include <cstdint>

#include "resplock/core/connection.hpp"
#include "resplock/ports/mock.hpp"

namespace support {

// The default config, with another timeout.
inline resplock::ConnectionConfig with_timeout(std::uint32_t ms) {
    resplock::ConnectionConfig c;
    c.timeout_ms = ms;
    return c;
}

template <std::size_t BufSize = 512>
struct MockConnection {
    resplock::mock::MockPort mock;
    resplock_port_t port = mock.port();
    char buf[BufSize];
    resplock::ConnectionConfig config;
    resplock::Connection conn;

    // The connection uses the first buf_size bytes of buf (fewer: a test of the limits).
    explicit MockConnection(resplock::ConnectionConfig c = {}, std::size_t buf_size = BufSize)
        : config(c), conn(port, config, buf, buf_size) {}
};

}  // namespace support

#endif  // RESPLOCK_TESTS_MOCK_CONNECTION_HPP
