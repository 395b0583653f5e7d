// The transport adapter port's own contract (include/resplock/core/port.h) over the test's
// coreMQTT-shaped plaintext transport and a real redis-server: set-up checks, the probe before
// each request (with and without the timeout hook), a server that closes, a transport that fails,
// one-byte sends through a whole lock cycle, and the timeouts handed to the transport.
#include <cstdint>
#include <cstring>
#include <string>

#include "check.hpp"
#include "lock_cases.hpp"
#include "plaintext_posix.h"
#include "resplock/core/lock.hpp"
#include "transport_net.hpp"

using lock_cases::Client;
using lock_cases::server;
using resplock::Lock;
using resplock::Status;
using transport_net::Bound;
using transport_net::Net;

namespace {

std::int32_t send_text(Net& n, const char* s, std::uint32_t timeout_ms) {
    return n.port_.send(n.port_.ctx, reinterpret_cast<const std::uint8_t*>(s), std::strlen(s),
                        timeout_ms);
}

std::int32_t connect_to_server(Net& n) {
    return n.port_.connect(n.port_.ctx, "127.0.0.1", server().port(), 2000);
}

// Reads until `want` bytes came (or a call returns anything but bytes).
std::string read_reply(Net& n, std::size_t want) {
    std::string got;
    std::uint8_t buf[64];
    while (got.size() < want) {
        const std::int32_t r = n.port_.recv(n.port_.ctx, buf, want - got.size(), 2000);
        if (r <= 0) break;
        got.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(r));
    }
    return got;
}

// Kills every plain client connection of the server but redis-cli's own.
void server_drops_its_clients() {
    CHECK(server().cli({"CLIENT", "KILL", "TYPE", "normal"}) != std::string("0"));
}

}  // namespace

TEST(init_refuses_an_incomplete_config_and_a_missing_random_source) {
    NetworkContext_t network;
    plaintext_init(&network);
    const resplock_transport_config_t full = plaintext_config(&network);
    resplock_transport_t ctx;
    resplock_port_t port{};
    CHECK_EQ(resplock_transport_port_init(nullptr, &full, &port), RESPLOCK_STATUS_invalid_argument);
    CHECK_EQ(resplock_transport_port_init(&ctx, nullptr, &port), RESPLOCK_STATUS_invalid_argument);
    CHECK_EQ(resplock_transport_port_init(&ctx, &full, nullptr), RESPLOCK_STATUS_invalid_argument);
    for (int missing = 0; missing < 8; ++missing) {
        resplock_transport_config_t c = full;
        switch (missing) {
            case 0:
                c.network = nullptr;
                break;
            case 1:
                c.recv = nullptr;
                break;
            case 2:
                c.send = nullptr;
                break;
            case 3:
                c.connect = nullptr;
                break;
            case 4:
                c.disconnect = nullptr;
                break;
            case 5:
                c.now_ms = nullptr;
                break;
            case 6:
                c.sleep_ms = nullptr;
                break;
            default:
                c.closed = 1;
                break;
        }
        CHECK_EQ(resplock_transport_port_init(&ctx, &c, &port), RESPLOCK_STATUS_invalid_argument);
        CHECK(port.connect == nullptr);  // *out untouched
    }
    resplock_transport_config_t no_random = full;
    no_random.random = nullptr;
    CHECK_EQ(resplock_transport_port_init(&ctx, &no_random, &port), RESPLOCK_STATUS_random_failed);
    CHECK(port.connect != nullptr);
    CHECK(port.random == nullptr);
    CHECK_EQ(resplock_transport_port_init(&ctx, &full, &port), RESPLOCK_STATUS_ok);
    CHECK(port.random != nullptr);
}

TEST(connect_outcomes_and_close_twice) {
    Net n;
    CHECK_EQ(n.port_.connect(n.port_.ctx, "127.0.0.1", support::free_port(), 2000),
             RESPLOCK_PORT_REFUSED);
    CHECK_EQ(n.port_.connect(n.port_.ctx, "redis.example", 6379, 2000), RESPLOCK_PORT_NO_HOST);
    CHECK_EQ(n.port_.connect(n.port_.ctx, "", 6379, 2000), RESPLOCK_PORT_NO_HOST);
    CHECK_EQ(n.port_.connect(n.port_.ctx, nullptr, 6379, 2000), RESPLOCK_PORT_NO_HOST);
    CHECK_EQ(n.network.connects, 0U);
    std::uint8_t buf[4];
    CHECK_EQ(n.port_.recv(n.port_.ctx, buf, sizeof buf, 0), RESPLOCK_PORT_ERROR);  // not connected
    REQUIRE_EQ(connect_to_server(n), RESPLOCK_PORT_OK);
    n.port_.close(n.port_.ctx);
    n.port_.close(n.port_.ctx);
    CHECK_EQ(n.network.disconnects, 1U);
    CHECK_EQ(n.network.fd, -1);
}

TEST(a_server_that_closes_gives_closed_or_error_when_the_transport_cannot_tell) {
    for (int tell : {1, 0}) {
        Net n;
        n.network.tell_closed = tell;
        REQUIRE_EQ(connect_to_server(n), RESPLOCK_PORT_OK);
        CHECK_EQ(send_text(n, "QUIT\r\n", 2000), 6);
        CHECK_EQ(read_reply(n, 5), std::string("+OK\r\n"));
        std::uint8_t buf[16];
        CHECK_EQ(n.port_.recv(n.port_.ctx, buf, sizeof buf, 2000),
                 tell ? RESPLOCK_PORT_CLOSED : RESPLOCK_PORT_ERROR);
    }
}

TEST(a_transport_recv_error_is_an_error_and_the_lock_is_not_held) {
    Net n;
    REQUIRE_EQ(connect_to_server(n), RESPLOCK_PORT_OK);
    n.network.fail_recv = 1;
    std::uint8_t buf[16];
    CHECK_EQ(n.port_.recv(n.port_.ctx, buf, sizeof buf, 1000), RESPLOCK_PORT_ERROR);
    n.port_.close(n.port_.ctx);

    // Through a lock: the SET goes out, its reply cannot be read.
    server().cli({"DEL", "tr:recv-error"});
    Client<Net> c;
    Lock lock(c.conn, "tr:recv-error");
    c.net.network.fail_recv = 1;
    // The SET reached the server, so whether it took the key is unknown; never held.
    CHECK_EQ(lock.acquire(5000), Status::unknown_outcome);
    CHECK(!lock.held());
    CHECK_EQ(c.net.network.disconnects, 1U);  // the library dropped the connection
    CHECK_EQ(server().cli({"EXISTS", "tr:recv-error"}), std::string("1"));
    // The next attempt connects afresh and works.
    server().cli({"DEL", "tr:recv-error"});
    CHECK_EQ(lock.acquire(5000), Status::ok);
    CHECK_EQ(c.net.network.connects, 2U);
    CHECK_EQ(lock.release(), Status::ok);
}

TEST(one_byte_sends_carry_a_whole_lock_cycle) {
    Client<Net> c;
    c.net.network.send_max = 1;
    Lock lock(c.conn, "tr:one-byte");
    server().cli({"DEL", "tr:one-byte"});
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    const unsigned after_acquire = c.net.network.send_calls;
    // "*5\r\n$3\r\nSET\r\n$11\r\ntr:one-byte\r\n$..." is well over 40 bytes, one call each.
    CHECK(after_acquire > 40U);
    CHECK_EQ(server().cli({"GET", "tr:one-byte"}), std::string(lock.token()));
    CHECK_EQ(lock.extend(20000), Status::ok);
    CHECK(lock_cases::pttl("tr:one-byte") > 15000);
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(server().cli({"EXISTS", "tr:one-byte"}), std::string("0"));
    CHECK(c.net.network.send_calls > after_acquire + 80U);
    CHECK_EQ(c.net.network.connects, 1U);

    // The port itself reports each partial send as such.
    Net n;
    n.network.send_max = 1;
    REQUIRE_EQ(connect_to_server(n), RESPLOCK_PORT_OK);
    CHECK_EQ(send_text(n, "PING\r\n", 1000), 1);
}

TEST(the_probe_looks_without_waiting_and_a_dropped_connection_is_replaced_before_the_request) {
    Client<Net> c;
    Lock lock(c.conn, "tr:probe");
    server().cli({"DEL", "tr:probe"});
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(lock.release(), Status::ok);
    // Before the release the library looked with timeout 0: the hook was asked for 0 and the
    // transport read with MSG_DONTWAIT.
    CHECK(c.net.network.probes >= 1U);

    server_drops_its_clients();
    const unsigned probes = c.net.network.probes;
    REQUIRE_EQ(lock.acquire(10000), Status::ok);  // the probe saw the close: a fresh connection
    CHECK_EQ(c.net.network.connects, 2U);
    CHECK(c.net.network.probes > probes);
    CHECK_EQ(lock.release(), Status::ok);

    // The probe on a live, quiet connection: 0, after one non-blocking read.
    Net n;
    REQUIRE_EQ(connect_to_server(n), RESPLOCK_PORT_OK);
    std::uint8_t buf[1];
    CHECK_EQ(n.port_.recv(n.port_.ctx, buf, 1, 0), 0);
    CHECK_EQ(n.network.recv_calls, 1U);
    CHECK_EQ(n.network.probes, 1U);
    CHECK_EQ(n.network.last_recv_timeout_ms, 0U);
}

TEST(without_the_hook_a_transport_that_may_wait_is_not_called_for_the_probe) {
    // The socket's own 5 s timeout, declared: no call may outlast the time left, so the probe
    // does not call recv at all, nor does a recv with less time than that.
    Net n(Bound::long_wait);
    REQUIRE_EQ(connect_to_server(n), RESPLOCK_PORT_OK);
    std::uint8_t buf[1];
    CHECK_EQ(n.port_.recv(n.port_.ctx, buf, 1, 0), 0);
    CHECK_EQ(n.port_.recv(n.port_.ctx, buf, 1, 50), 0);
    CHECK_EQ(n.network.recv_calls, 0U);
    // With enough time left, the transport is called and the reply read.
    CHECK_EQ(send_text(n, "PING\r\n", 6000), 6);
    std::string got;
    while (got.size() < 7) {
        const std::int32_t r = n.port_.recv(n.port_.ctx, buf, 1, 6000);
        if (r != 1) break;
        got.push_back(static_cast<char>(buf[0]));
    }
    CHECK_EQ(got, std::string("+PONG\r\n"));
    CHECK(n.network.recv_calls >= 7U);
}

TEST(without_the_hook_a_short_socket_timeout_carries_the_lock_and_a_dropped_connection) {
    Net n(Bound::short_wait);
    resplock::ConnectionConfig config = Client<Net>::make(Net::server(), 2000);
    char buf[512];
    resplock::Connection conn(n.port(), config, buf, sizeof buf);
    Lock lock(conn, "tr:short-wait");
    server().cli({"DEL", "tr:short-wait"});
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(server().cli({"GET", "tr:short-wait"}), std::string(lock.token()));
    CHECK_EQ(lock.extend(10000), Status::ok);
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(n.network.probes, 0U);  // never MSG_DONTWAIT: there is no hook
    CHECK_EQ(n.network.connects, 1U);

    // The probe is skipped, so a connection the server dropped while idle is found only by the
    // request that follows: it went out on the dead connection, so its outcome is unknown (the
    // server never saw it); the one after it connects afresh.
    server_drops_its_clients();
    CHECK_EQ(lock.acquire(10000), Status::unknown_outcome);
    CHECK(!lock.held());
    CHECK_EQ(server().cli({"EXISTS", "tr:short-wait"}), std::string("0"));
    CHECK_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(n.network.connects, 2U);
    CHECK_EQ(lock.release(), Status::ok);
}

TEST(the_time_left_is_handed_to_the_transport) {
    Net::Silent silent;
    Net n;
    REQUIRE_EQ(n.port_.connect(n.port_.ctx, "127.0.0.1", silent.endpoint().port, 2000),
               RESPLOCK_PORT_OK);
    std::uint8_t buf[8];
    CHECK_EQ(n.port_.recv(n.port_.ctx, buf, sizeof buf, 300), 0);
    CHECK(n.network.timeout_sets >= 1U);
    CHECK(n.network.recv_calls >= 1U);
    // The first call got (nearly) the whole 300 ms, never more; any later one, what was left.
    CHECK(n.network.last_recv_timeout_ms <= 300U);
    CHECK_EQ(n.network.probes, 0U);
}
