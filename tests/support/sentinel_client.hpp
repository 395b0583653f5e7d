// A library connection through a resplock::Sentinel that asks every sentinel of a
// SentinelTopology in order, over the POSIX port, with a buffer of its own.
#ifndef RESPLOCK_TESTS_SENTINEL_CLIENT_HPP
#define RESPLOCK_TESTS_SENTINEL_CLIENT_HPP

#include <cstddef>

#include "ports.hpp"
#include "redis_sentinel.hpp"
#include "resplock/core/connection.hpp"
#include "resplock/ha/sentinel.hpp"

namespace support {

struct SentinelClient {
    resplock::Sentinel sentinel;
    resplock_posix_t ctx;
    resplock_port_t port = posix_port(ctx);
    resplock::ConnectionConfig config;
    char buf[512];
    resplock::Connection conn;
    bool added = true;  // every sentinel was taken by Sentinel::add

    explicit SentinelClient(const SentinelTopology& t)
        : sentinel(t.name()), config(make(sentinel)), conn(port, config, buf, sizeof buf) {
        for (std::size_t i = 0; i < t.sentinels(); ++i)
            added = sentinel.add("127.0.0.1", t.sentinel_port(i)) && added;
    }
    SentinelClient(const SentinelClient&) = delete;
    SentinelClient& operator=(const SentinelClient&) = delete;
    ~SentinelClient() = default;

    static resplock::ConnectionConfig make(resplock::Sentinel& router) {
        resplock::ConnectionConfig c;
        c.router = &router;
        c.host = "no.such.host.invalid";  // not used with a router
        c.timeout_ms = 2000;
        return c;
    }
};

}  // namespace support

#endif  // RESPLOCK_TESTS_SENTINEL_CLIENT_HPP
