// The POSIX port as an expression, for tests: resplock_posix_port_init with the defaults. It can
// fail only on a null argument, which would be a bug in the test itself. PosixClient: one
// connection over it to a server on 127.0.0.1, with a buffer of its own.
#ifndef RESPLOCK_TESTS_PORTS_HPP
#define RESPLOCK_TESTS_PORTS_HPP

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "resplock/core/connection.hpp"
#include "resplock/ports/posix.h"

namespace support {

inline resplock_port_t posix_port(resplock_posix_t& ctx) {
    resplock_port_t port{};
    if (resplock_posix_port_init(&ctx, nullptr, &port) != RESPLOCK_STATUS_ok) std::abort();
    return port;
}

struct PosixClient {
    resplock_posix_t ctx;
    resplock_port_t port = posix_port(ctx);
    resplock::ConnectionConfig config;
    std::vector<char> buf;
    resplock::Connection conn;

    PosixClient(std::uint16_t server_port, std::size_t buf_size, const char* user = nullptr,
                const char* password = nullptr)
        : config(make(server_port, user, password)),
          buf(buf_size),
          conn(port, config, buf.data(), buf.size()) {}
    PosixClient(const PosixClient&) = delete;
    PosixClient& operator=(const PosixClient&) = delete;
    ~PosixClient() = default;

    static resplock::ConnectionConfig make(std::uint16_t server_port, const char* user,
                                           const char* password) {
        resplock::ConnectionConfig c;
        c.host = "127.0.0.1";
        c.port = server_port;
        c.username = user;
        c.password = password;
        c.timeout_ms = 2000;
        return c;
    }
};

}  // namespace support

#endif  // RESPLOCK_TESTS_PORTS_HPP
