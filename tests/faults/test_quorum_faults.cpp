// The quorum lock with a FaultProxy in front of each of five real redis-servers: a request goes
// to every server before any reply is read (one round trip, not five), a server that answers
// later than its wait has not granted, and the keys an acquisition may have set where replies
// were lost are taken back.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "check.hpp"
#include "fault_proxy.hpp"
#include "ports.hpp"
#include "redis_server.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/quorum_lock.hpp"

namespace {

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::QuorumLock;
using resplock::Status;
using support::Fault;
using support::FaultProxy;
using support::Way;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kServers = 5;
constexpr std::uint32_t kDelay = 100;  // ms each reply is held by the proxy

struct Rig {
    support::RedisServer servers[kServers];
    std::unique_ptr<FaultProxy> proxies[kServers];
    Rig() {
        for (std::size_t i = 0; i < kServers; ++i) {
            proxies[i].reset(new FaultProxy(servers[i].port()));
        }
    }
};

Rig& rig() {
    static Rig r;
    return r;
}

std::int64_t ms_since(Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

// Delays replies from servers [0, n) by `ms`; the others pass through.
void delay_replies(std::size_t n, std::uint32_t ms) {
    for (std::size_t i = 0; i < kServers; ++i) {
        Fault f;
        f.delay_ms = i < n ? ms : 0;
        rig().proxies[i]->set(Way::to_client, f);
    }
}

// One connection per server, through its proxy.
struct Client {
    resplock_posix_t ctx[kServers] = {};
    resplock_port_t port[kServers];
    ConnectionConfig config[kServers];
    char buf[kServers][512];
    std::unique_ptr<Connection> conn[kServers];
    Connection* conns[kServers];

    Client() {
        for (std::size_t i = 0; i < kServers; ++i) {
            port[i] = support::posix_port(ctx[i]);
            config[i].host = "127.0.0.1";
            config[i].port = rig().proxies[i]->port();
            config[i].timeout_ms = 2000;
            conn[i].reset(new Connection(port[i], config[i], buf[i], sizeof buf[i]));
            conns[i] = conn[i].get();
        }
    }
};

std::string get(std::size_t i, const std::string& key) {
    return rig().servers[i].cli({"GET", key});
}

#define CHECK_TOOK(took, lo, hi)                                                 \
    do {                                                                         \
        const long long took_ = static_cast<long long>(took);                    \
        if (!CHECK(took_ >= (lo) && took_ <= (hi))) {                            \
            std::printf("      took %lld ms, expected %lld..%lld\n", took_,      \
                        static_cast<long long>(lo), static_cast<long long>(hi)); \
        }                                                                        \
    } while (0)

TEST(servers_and_proxies_start) {
    for (std::size_t i = 0; i < kServers; ++i) {
        REQUIRE(rig().servers[i].running());
        REQUIRE(rig().proxies[i]->port() != 0);
    }
}

TEST(one_round_trip_for_all_servers) {
    Client c;
    QuorumLock lock(c.conns, kServers, "qf:round");
    // Scripts cached and connections open, so each call below is exactly one pass.
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    REQUIRE_EQ(lock.extend(10000), Status::ok);
    REQUIRE_EQ(lock.release(), Status::ok);
    delay_replies(kServers, kDelay);
    // Five servers one after the other would take five delays; all at once, about one.
    Clock::time_point start = Clock::now();
    CHECK_EQ(lock.acquire(10000), Status::ok);
    CHECK_TOOK(ms_since(start), kDelay, 3 * kDelay);
    CHECK_EQ(lock.granted(), kServers);
    start = Clock::now();
    CHECK_EQ(lock.extend(10000), Status::ok);
    CHECK_TOOK(ms_since(start), kDelay, 3 * kDelay);
    CHECK_EQ(lock.granted(), kServers);
    start = Clock::now();
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_TOOK(ms_since(start), kDelay, 3 * kDelay);
    delay_replies(0, 0);
    for (std::size_t i = 0; i < kServers; ++i) {
        CHECK_EQ(get(i, "qf:round"), std::string());
    }
}

TEST(late_servers_have_not_granted) {
    // ttl 3000: each server's wait is 300 ms. Two servers answer after 800 ms: the lock is held
    // on the three others, within about one wait.
    Client c;
    QuorumLock lock(c.conns, kServers, "qf:late");
    delay_replies(2, 800);
    const Clock::time_point start = Clock::now();
    CHECK_EQ(lock.acquire(3000), Status::ok);
    CHECK_TOOK(ms_since(start), 300, 300 + 300);
    CHECK_EQ(lock.granted(), 3U);
    CHECK(lock.held());
    delay_replies(0, 0);
    CHECK_EQ(lock.release(), Status::ok);
    for (std::size_t i = 0; i < kServers; ++i) {
        CHECK_EQ(get(i, "qf:late"), std::string());
    }
}

TEST(lost_replies_from_a_majority_not_held_and_keys_taken_back) {
    // Three servers answer after 800 ms, past the 300 ms wait: not a majority. Their SET ran
    // (only the replies are late), so the keys are there until the owner-checked delete, sent
    // to every server before acquire returns, takes them back (it too runs at once; only its
    // reply is late). The TTL is far from over when the servers are checked.
    Client c;
    QuorumLock lock(c.conns, kServers, "qf:lost");
    // The owner script cached first: a NOSCRIPT answer would come too late for the EVAL.
    REQUIRE_EQ(lock.acquire(3000), Status::ok);
    REQUIRE_EQ(lock.release(), Status::ok);
    delay_replies(3, 800);
    const Clock::time_point start = Clock::now();
    CHECK_EQ(lock.acquire(3000), Status::timeout);
    CHECK_TOOK(ms_since(start), 300, 2 * 300 + 300);
    CHECK_EQ(lock.granted(), 2U);
    CHECK(!lock.held());
    CHECK(lock.token().empty());
    for (std::size_t i = 0; i < kServers; ++i) {
        CHECK_EQ(get(i, "qf:lost"), std::string());
    }
    CHECK(ms_since(start) < 3000);
    delay_replies(0, 0);
}

}  // namespace
