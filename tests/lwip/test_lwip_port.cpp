// The lwIP port's own contract (include/resplock/port.h) over Debian's real lwIP stack: connect
// outcomes and timeouts, partial sends, recv timing, close twice, and refusal without a random
// source.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "lock_cases.hpp"
#include "lwip_net.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/lwip.h"

using lock_cases::ms_since;
using resplock::Status;

namespace {

// A port over a fresh context, with the OS random source.
struct Net {
    resplock_lwip_t ctx;
    resplock_port_t port;
    Net() {
        lwipnet::stack();
        resplock_lwip_config_t config{};
        config.random = lwipnet::os_random;
        (void)resplock_lwip_port_init(&ctx, &config, &port);
    }
    std::int32_t connect(const char* host, std::uint16_t p, std::uint32_t timeout_ms) {
        return port.connect(port.ctx, host, p, timeout_ms);
    }
    std::int32_t send(const std::string& s, std::uint32_t timeout_ms) {
        return port.send(port.ctx, reinterpret_cast<const std::uint8_t*>(s.data()), s.size(),
                         timeout_ms);
    }
    std::int32_t recv(std::uint8_t* buf, std::size_t len, std::uint32_t timeout_ms) {
        return port.recv(port.ctx, buf, len, timeout_ms);
    }
    ~Net() { port.close(port.ctx); }
};

using Clock = std::chrono::steady_clock;

}  // namespace

TEST(connect_to_a_port_nothing_listens_on_is_refused_at_once) {
    Net n;
    const auto start = Clock::now();
    CHECK_EQ(n.connect(lwipnet::ipv4, lwipnet::unused_port(), 2000), RESPLOCK_PORT_REFUSED);
    CHECK(ms_since(start) < 200);
    CHECK_EQ(n.ctx.sock, -1);  // no socket left open
}

TEST(connect_to_an_address_lwip_has_no_route_to_is_refused_at_once) {
    // Off the netif's subnet, and the stack has no default netif: lwIP fails the connect before
    // sending anything. The port tells that from a connect in progress without errno.
    Net n;
    CHECK_EQ(n.connect("10.12.0.1", 6379, 2000), RESPLOCK_PORT_REFUSED);
    CHECK_EQ(n.ctx.sock, -1);
}

TEST(connect_to_a_host_that_never_answers_times_out_on_time) {
    Net n;
    for (std::uint32_t timeout : {0U, 300U}) {
        const auto start = Clock::now();
        CHECK_EQ(n.connect(lwipnet::nowhere, 6379, timeout), RESPLOCK_PORT_TIMEOUT);
        const auto took = ms_since(start);
        CHECK(took >= static_cast<std::int64_t>(timeout) - 5);
        CHECK(took < static_cast<std::int64_t>(timeout) + 100);
        CHECK_EQ(n.ctx.sock, -1);
    }
}

TEST(names_without_lwip_dns_are_no_host) {
    Net n;
    CHECK_EQ(n.connect("redis.example", 6379, 500), RESPLOCK_PORT_NO_HOST);
    CHECK_EQ(n.connect("", 6379, 500), RESPLOCK_PORT_NO_HOST);
    CHECK_EQ(n.connect(nullptr, 6379, 500), RESPLOCK_PORT_NO_HOST);
    CHECK_EQ(n.connect("10.11.0.1.5", 6379, 500), RESPLOCK_PORT_NO_HOST);
}

TEST(recv_returns_0_when_nothing_arrives_within_the_timeout) {
    lwipnet::Peer silent;
    Net n;
    REQUIRE_EQ(n.connect(lwipnet::ipv4, silent.port(), 1000), RESPLOCK_PORT_OK);
    std::uint8_t buf[16];
    for (std::uint32_t timeout : {0U, 200U}) {
        const auto start = Clock::now();
        CHECK_EQ(n.recv(buf, sizeof buf, timeout), 0);
        const auto took = ms_since(start);
        CHECK(took >= static_cast<std::int64_t>(timeout) - 5);
        CHECK(took < static_cast<std::int64_t>(timeout) + 100);
    }
}

TEST(recv_returns_as_soon_as_bytes_arrive_and_closed_after_the_peer_closes) {
    // Inline commands straight to redis-server through the bridge.
    Net n;
    REQUIRE_EQ(n.connect(lwipnet::ipv4, lwipnet::bridge_port(), 1000), RESPLOCK_PORT_OK);
    CHECK_EQ(n.send("PING\r\n", 1000), 6);
    std::uint8_t buf[64];
    auto start = Clock::now();
    std::int32_t got = n.recv(buf, sizeof buf, 5000);
    CHECK(ms_since(start) < 500);  // not held until the buffer fills or the timeout ends
    REQUIRE_EQ(got, 7);
    CHECK_EQ(std::string(reinterpret_cast<char*>(buf), 7), std::string("+PONG\r\n"));

    // A one-byte buffer gets one byte at a time, none lost.
    CHECK_EQ(n.send("PING\r\n", 1000), 6);
    std::string reply;
    for (int i = 0; i < 7; ++i) {
        REQUIRE_EQ(n.recv(buf, 1, 1000), 1);
        reply.push_back(static_cast<char>(buf[0]));
    }
    CHECK_EQ(reply, std::string("+PONG\r\n"));

    // The server closes after QUIT: its +OK, then an orderly close.
    CHECK_EQ(n.send("QUIT\r\n", 1000), 6);
    got = n.recv(buf, sizeof buf, 2000);
    REQUIRE_EQ(got, 5);
    CHECK_EQ(std::string(reinterpret_cast<char*>(buf), 5), std::string("+OK\r\n"));
    start = Clock::now();
    CHECK_EQ(n.recv(buf, sizeof buf, 2000), RESPLOCK_PORT_CLOSED);
    CHECK(ms_since(start) < 1000);
}

TEST(ipv6_numeric_host_reaches_the_server) {
    Net n;
    REQUIRE_EQ(n.connect(lwipnet::ipv6, lwipnet::bridge_port(), 1000), RESPLOCK_PORT_OK);
    CHECK_EQ(n.send("PING\r\n", 1000), 6);
    std::uint8_t buf[16];
    REQUIRE_EQ(n.recv(buf, sizeof buf, 2000), 7);
    CHECK_EQ(std::string(reinterpret_cast<char*>(buf), 7), std::string("+PONG\r\n"));
}

TEST(partial_sends_then_0_at_the_timeout_and_every_accepted_byte_arrives) {
    // A peer that does not read: lwIP's send buffer and the peer's window fill up, so a large
    // send is accepted in part, and once nothing more fits, send returns 0 at its timeout.
    lwipnet::Peer sink;
    Net n;
    REQUIRE_EQ(n.connect(lwipnet::ipv4, sink.port(), 1000), RESPLOCK_PORT_OK);
    std::vector<std::uint8_t> data(4U << 20);
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<std::uint8_t>(i * 7U + (i >> 8));
    }
    std::size_t sent = 0;
    bool partial = false;
    bool stalled = false;
    while (sent < data.size()) {
        const auto start = Clock::now();
        const std::int32_t r = n.port.send(n.port.ctx, data.data() + sent, data.size() - sent, 200);
        const auto took = ms_since(start);
        if (r == 0) {
            CHECK(took >= 195 && took < 300);
            stalled = true;
            break;
        }
        REQUIRE(r > 0);
        REQUIRE(static_cast<std::size_t>(r) <= data.size() - sent);
        if (static_cast<std::size_t>(r) < data.size() - sent) partial = true;
        sent += static_cast<std::size_t>(r);
    }
    CHECK(partial);
    CHECK(stalled);
    CHECK(sent > 0 && sent < data.size());

    // Let the peer read: exactly the accepted bytes arrive, in order.
    n.port.close(n.port.ctx);
    const std::string got = sink.read_to_end(0, 5000);
    CHECK_EQ(got.size(), sent);
    CHECK(got.size() == sent && std::memcmp(got.data(), data.data(), sent) == 0);
}

TEST(send_and_recv_report_closed_once_the_peer_has_gone) {
    lwipnet::Peer peer;
    Net n;
    REQUIRE_EQ(n.connect(lwipnet::ipv4, peer.port(), 1000), RESPLOCK_PORT_OK);
    REQUIRE(peer.accepted(0) >= 0);
    peer.close(0);
    std::uint8_t buf[8];
    CHECK_EQ(n.recv(buf, sizeof buf, 1000), RESPLOCK_PORT_CLOSED);
    // Writing to a connection the peer has fully closed gets a reset: CLOSED, never a signal.
    std::int32_t r = 0;
    for (int i = 0; i < 50 && r >= 0; ++i) {
        r = n.send("PING\r\n", 100);
        if (r >= 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK_EQ(r, RESPLOCK_PORT_CLOSED);
}

TEST(a_reset_is_closed_on_every_later_call_too) {
    // The peer closes with our bytes unread: lwIP answers with a reset. Its error is reported
    // once by the stack (and then cleared); later calls still see a connection that is gone.
    lwipnet::Peer peer;
    Net n;
    REQUIRE_EQ(n.connect(lwipnet::ipv4, peer.port(), 1000), RESPLOCK_PORT_OK);
    REQUIRE(peer.accepted(0) >= 0);
    REQUIRE_EQ(n.send("PING\r\n", 1000), 6);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let the bytes arrive
    peer.close(0);
    std::uint8_t buf[8];
    CHECK_EQ(n.recv(buf, sizeof buf, 1000), RESPLOCK_PORT_CLOSED);
    CHECK_EQ(n.recv(buf, sizeof buf, 1000), RESPLOCK_PORT_CLOSED);
    CHECK_EQ(n.recv(buf, sizeof buf, 0), RESPLOCK_PORT_CLOSED);
    CHECK_EQ(n.send("PING\r\n", 1000), RESPLOCK_PORT_CLOSED);
}

TEST(close_is_safe_twice_and_the_port_connects_again) {
    Net n;
    n.port.close(n.port.ctx);  // never connected
    REQUIRE_EQ(n.connect(lwipnet::ipv4, lwipnet::bridge_port(), 1000), RESPLOCK_PORT_OK);
    n.port.close(n.port.ctx);
    n.port.close(n.port.ctx);
    CHECK_EQ(n.ctx.sock, -1);
    std::uint8_t buf[8];
    CHECK_EQ(n.recv(buf, sizeof buf, 100), RESPLOCK_PORT_ERROR);
    CHECK_EQ(n.send("PING\r\n", 100), RESPLOCK_PORT_ERROR);
    REQUIRE_EQ(n.connect(lwipnet::ipv4, lwipnet::bridge_port(), 1000), RESPLOCK_PORT_OK);
    CHECK_EQ(n.send("PING\r\n", 1000), 6);
    CHECK_EQ(n.recv(buf, sizeof buf, 2000), 7);
}

TEST(clock_and_sleep_follow_lwip_and_the_sleep_hook) {
    Net n;
    const std::uint32_t t0 = n.port.now_ms(n.port.ctx);
    auto start = Clock::now();
    n.port.sleep_ms(n.port.ctx, 50);  // sys_msleep
    const std::uint32_t t1 = n.port.now_ms(n.port.ctx);
    CHECK(ms_since(start) >= 49);
    CHECK(t1 - t0 >= 49U && t1 - t0 < 150U);

    struct Hook {
        std::uint32_t asked = 0;
        static void sleep(void* user, std::uint32_t ms) { static_cast<Hook*>(user)->asked += ms; }
    } hook;
    resplock_lwip_t ctx;
    resplock_port_t port;
    resplock_lwip_config_t config{};
    config.random = lwipnet::os_random;
    config.sleep = Hook::sleep;
    config.sleep_user = &hook;
    REQUIRE_EQ(resplock_lwip_port_init(&ctx, &config, &port), RESPLOCK_STATUS_ok);
    start = Clock::now();
    port.sleep_ms(port.ctx, 1000);
    CHECK(ms_since(start) < 100);  // the hook decides how to sleep
    CHECK_EQ(hook.asked, 1000U);
}

TEST(the_port_refuses_to_make_tokens_without_a_random_source) {
    resplock_lwip_t ctx;
    resplock_port_t port;
    resplock_lwip_config_t config{};  // no random
    CHECK_EQ(resplock_lwip_port_init(&ctx, &config, &port), RESPLOCK_STATUS_random_failed);
    CHECK(port.random == nullptr);
    CHECK(port.connect != nullptr && port.close != nullptr && port.now_ms != nullptr);
    CHECK_EQ(resplock_lwip_port_init(&ctx, nullptr, &port), RESPLOCK_STATUS_random_failed);
    CHECK(port.random == nullptr);

    // Even if the result is ignored, a lock over it never takes the key.
    REQUIRE(resplock_lwip_port_init(&ctx, &config, &port) == RESPLOCK_STATUS_random_failed);
    resplock::ConnectionConfig cc;
    cc.host = lwipnet::ipv4;
    cc.port = lwipnet::bridge_port();
    char buf[512];
    resplock::Connection conn(port, cc, buf, sizeof buf);
    resplock::Lock lock(conn, "lwip:norandom");
    CHECK_EQ(lock.acquire(5000), Status::random_failed);
    CHECK_EQ(lock.try_acquire(5000, 200), Status::random_failed);
    CHECK(!lock.held());
    CHECK_EQ(lock_cases::server().cli({"EXISTS", "lwip:norandom"}), std::string("0"));
}

TEST(the_applications_random_source_is_used_and_its_failure_refuses_the_lock) {
    struct Source {
        int calls = 0;
        bool fail = false;
        static std::int32_t fill(void* user, std::uint8_t* buf, std::size_t len) {
            auto* self = static_cast<Source*>(user);
            ++self->calls;
            if (self->fail) return -1;
            return lwipnet::os_random(nullptr, buf, len);
        }
    } source;
    resplock_lwip_t ctx;
    resplock_port_t port;
    resplock_lwip_config_t config{};
    config.random = Source::fill;
    config.random_user = &source;
    REQUIRE_EQ(resplock_lwip_port_init(&ctx, &config, &port), RESPLOCK_STATUS_ok);
    resplock::ConnectionConfig cc;
    cc.host = lwipnet::ipv4;
    cc.port = lwipnet::bridge_port();
    char buf[512];
    resplock::Connection conn(port, cc, buf, sizeof buf);
    resplock::Lock lock(conn, "lwip:random");
    REQUIRE_EQ(lock.acquire(5000), Status::ok);
    CHECK(source.calls >= 1);
    CHECK_EQ(lock_cases::server().cli({"GET", "lwip:random"}), std::string(lock.token()));
    CHECK_EQ(lock.release(), Status::ok);
    source.fail = true;
    CHECK_EQ(lock.acquire(5000), Status::random_failed);
    CHECK_EQ(lock_cases::server().cli({"EXISTS", "lwip:random"}), std::string("0"));
}
