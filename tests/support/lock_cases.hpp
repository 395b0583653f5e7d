// The lock's integration cases against a real redis-server, written once for any transport. A
// test binary supplies a `Net` type and registers every case with RESPLOCK_LOCK_CASES(Net), so the
// POSIX suite and the lwIP suite run literally the same code.
//
// Net must provide:
//   Net()                                      a fresh, unconnected port context, used in place;
//   const resplock_port_t& port() const        the port over that context;
//   static lock_cases::Endpoint server()       where lock_cases::server() is reached through it;
//   static lock_cases::Endpoint refused()      an address and port where nothing listens;
//   struct Net::Silent { Silent(); Endpoint endpoint() const; }
//                                              a peer that accepts connections and never answers,
//                                              for as long as the object lives.
#ifndef RESPLOCK_TESTS_LOCK_CASES_HPP
#define RESPLOCK_TESTS_LOCK_CASES_HPP

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "check.hpp"
#include "redis_server.hpp"
#include "resplock/core/lock.hpp"

namespace lock_cases {

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::LockInfo;
using resplock::LockState;
using resplock::Status;

struct Endpoint {
    const char* host;  // must outlive the connections made to it
    std::uint16_t port;
};

// The one server of the test binary, started on first use.
inline support::RedisServer& server() {
    static support::RedisServer s;
    return s;
}

// server(), refused() and Silent of a Net whose sockets reach the host's 127.0.0.1 directly.
struct Loopback {
    static Endpoint server() { return {"127.0.0.1", lock_cases::server().port()}; }
    static Endpoint refused() { return {"127.0.0.1", support::free_port()}; }
    struct Silent {
        support::SilentListener listener;
        Endpoint endpoint() const { return {"127.0.0.1", listener.port()}; }
    };
};

// One connection over a fresh Net.
template <typename Net>
struct Client {
    Net net;
    ConnectionConfig config;
    char buf[512];
    Connection conn;

    explicit Client(std::uint32_t timeout_ms = 2000) : Client(Net::server(), timeout_ms) {}
    Client(Endpoint to, std::uint32_t timeout_ms)
        : config(make(to, timeout_ms)), conn(net.port(), config, buf, sizeof buf) {}
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    static ConnectionConfig make(Endpoint to, std::uint32_t timeout_ms) {
        ConnectionConfig c;
        c.host = to.host;
        c.port = to.port;
        c.timeout_ms = timeout_ms;
        return c;
    }
};

inline long long pttl(const std::string& key) {
    return std::atoll(server().cli({"PTTL", key}).c_str());
}

inline std::int64_t ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 t)
        .count();
}

inline long long as_ll(std::int64_t v) {
    return static_cast<long long>(v);
}

inline void server_started() {
    REQUIRE(server().running());
}

template <typename Net>
void evalsha_finds_the_script_after_one_eval() {
    // Were the digest the library sends not the SHA1 of the script text it sends, every EVALSHA
    // would fail with NOSCRIPT and fall back to EVAL. With the right digest, the owner script
    // (extend, query and release) is sent as EVAL once after the cache is flushed.
    CHECK_EQ(server().cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(server().cli({"CONFIG", "RESETSTAT"}), std::string("OK"));
    Client<Net> c;
    Lock lock(c.conn, "it:digest");
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    LockInfo info;
    for (int i = 0; i < 3; ++i) {
        CHECK_EQ(lock.extend(10000), Status::ok);
        CHECK_EQ(lock.query(info), Status::ok);
    }
    CHECK_EQ(lock.release(), Status::ok);
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    CHECK_EQ(lock.release(), Status::ok);
    const std::string stats = server().cli({"INFO", "commandstats"});
    CHECK(stats.find("cmdstat_eval:calls=1,") != std::string::npos);
    CHECK(stats.find("cmdstat_evalsha:calls=") != std::string::npos);
    if (check::failed()) std::printf("      %s\n", stats.c_str());
}

template <typename Net>
void acquire_sets_the_token_with_the_ttl() {
    Client<Net> c;
    Lock lock(c.conn, "it:acquire");
    REQUIRE_EQ(lock.acquire(5000), Status::ok);
    CHECK_EQ(server().cli({"GET", "it:acquire"}), std::string(lock.token()));
    const long long t = pttl("it:acquire");
    CHECK(t > 4000 && t <= 5000);
    CHECK(lock.remaining_ms() > 4800U && lock.remaining_ms() <= 4948U);
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(server().cli({"EXISTS", "it:acquire"}), std::string("0"));
}

template <typename Net>
void second_client_is_busy_until_release() {
    Client<Net> a, b;
    Lock la(a.conn, "it:busy"), lb(b.conn, "it:busy");
    REQUIRE_EQ(la.acquire(10000), Status::ok);
    CHECK_EQ(lb.acquire(10000), Status::busy);
    CHECK(!lb.held());
    LockInfo info;
    CHECK_EQ(lb.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_other);
    CHECK(info.ttl_ms > 9000);
    CHECK_EQ(la.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_me);
    CHECK_EQ(la.release(), Status::ok);
    CHECK_EQ(lb.query(info), Status::ok);
    CHECK(info.state == LockState::free);
    CHECK_EQ(info.ttl_ms, -2);
    CHECK_EQ(lb.acquire(10000), Status::ok);
    CHECK_EQ(lb.release(), Status::ok);
}

template <typename Net>
void release_by_a_stale_holder_is_not_owner_and_leaves_the_key() {
    Client<Net> a, b;
    Lock la(a.conn, "it:stale"), lb(b.conn, "it:stale");
    REQUIRE_EQ(la.acquire(100), Status::ok);
    std::string first(la.token());
    // Let it expire, then someone else takes it.
    while (pttl("it:stale") != -2) {
    }
    REQUIRE_EQ(lb.acquire(10000), Status::ok);
    CHECK_EQ(la.release(), Status::not_owner);
    CHECK_EQ(server().cli({"GET", "it:stale"}), std::string(lb.token()));
    CHECK(first != std::string(lb.token()));
    CHECK_EQ(lb.release(), Status::ok);
}

template <typename Net>
void release_after_expiry_is_expired() {
    Client<Net> c;
    Lock lock(c.conn, "it:expired");
    REQUIRE_EQ(lock.acquire(50), Status::ok);
    while (pttl("it:expired") != -2) {
    }
    CHECK_EQ(lock.release(), Status::expired);
}

template <typename Net>
void extend_resets_the_ttl_only_for_the_owner() {
    Client<Net> a, b;
    Lock la(a.conn, "it:extend"), lb(b.conn, "it:extend");
    REQUIRE_EQ(la.acquire(1000), Status::ok);
    CHECK_EQ(la.extend(20000), Status::ok);
    CHECK(pttl("it:extend") > 19000);
    REQUIRE_EQ(lb.adopt("not-the-token"), Status::ok);
    CHECK_EQ(lb.extend(60000), Status::not_owner);
    CHECK(pttl("it:extend") <= 20000);
    CHECK_EQ(la.release(), Status::ok);
    REQUIRE_EQ(lb.adopt("not-the-token"), Status::ok);
    CHECK_EQ(lb.extend(60000), Status::expired);
}

template <typename Net>
void noscript_fallback_after_script_flush() {
    Client<Net> c;
    Lock lock(c.conn, "it:flush");
    REQUIRE_EQ(lock.acquire(10000), Status::ok);
    // The owner script's SHA1 (src/core/lua/owner.lua).
    const std::string owner_sha = "23d13ce2ffcb74f3babaff7e5afc9c05b7a72781";
    CHECK_EQ(lock.extend(10000), Status::ok);  // loads the scripts once (EVAL after NOSCRIPT)
    CHECK_EQ(server().cli({"SCRIPT", "EXISTS", owner_sha}), std::string("1"));
    CHECK_EQ(server().cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(server().cli({"SCRIPT", "EXISTS", owner_sha}), std::string("0"));
    CHECK_EQ(lock.extend(10000), Status::ok);
    CHECK_EQ(server().cli({"SCRIPT", "FLUSH"}), std::string("OK"));
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(server().cli({"EXISTS", "it:flush"}), std::string("0"));
}

template <typename Net>
void try_acquire_waits_for_the_holders_expiry() {
    Client<Net> a, b;
    Lock la(a.conn, "it:wait"), lb(b.conn, "it:wait");
    REQUIRE_EQ(la.acquire(400), Status::ok);
    const auto start = std::chrono::steady_clock::now();
    CHECK_EQ(lb.try_acquire(10000, 3000), Status::ok);
    const auto waited = ms_since(start);
    // Sleeps are capped by the holder's PTTL, so the waiter follows expiry closely.
    if (!CHECK(waited >= 300 && waited < 1000))
        std::printf("      waited %lld ms\n", as_ll(waited));
    CHECK_EQ(lb.release(), Status::ok);
}

template <typename Net>
void try_acquire_gives_up_at_the_deadline() {
    Client<Net> a, b;
    Lock la(a.conn, "it:deadline"), lb(b.conn, "it:deadline");
    REQUIRE_EQ(la.acquire(30000), Status::ok);
    const auto start = std::chrono::steady_clock::now();
    CHECK_EQ(lb.try_acquire(1000, 500), Status::busy);
    const auto waited = ms_since(start);
    // The port's clock counts whole milliseconds, so the deadline it sees may pass up to 1 ms
    // before 500 ms of real time have.
    if (!CHECK(waited >= 499 && waited < 900)) std::printf("      waited %lld ms\n", as_ll(waited));
    CHECK_EQ(la.release(), Status::ok);
}

template <typename Net>
void a_key_of_another_type_is_busy_not_corrupted() {
    Client<Net> c;
    server().cli({"HSET", "it:hash", "owner", "1"});
    Lock lock(c.conn, "it:hash");
    CHECK_EQ(lock.acquire(1000), Status::busy);
    REQUIRE_EQ(lock.adopt("x"), Status::ok);
    CHECK_EQ(lock.release(), Status::not_owner);
    CHECK_EQ(server().cli({"HGET", "it:hash", "owner"}), std::string("1"));
}

template <typename Net>
void binary_key_and_value_round_trip() {
    Client<Net> c;
    const std::string_view key("it:\r\n\0bin", 10);
    Lock lock(c.conn, key);
    REQUIRE_EQ(lock.acquire(5000), Status::ok);
    LockInfo info;
    CHECK_EQ(lock.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_me);
    CHECK_EQ(lock.release(), Status::ok);
    CHECK_EQ(lock.query(info), Status::ok);
    CHECK(info.state == LockState::free);
}

template <typename Net>
void unreachable_server_fails_fast_and_never_holds() {
    Client<Net> c(Net::refused(), 500);
    Lock lock(c.conn, "it:nowhere");
    CHECK_EQ(lock.acquire(1000), Status::connect_failed);
    CHECK(!lock.held());
    const auto start = std::chrono::steady_clock::now();
    CHECK_EQ(lock.try_acquire(1000, 300), Status::connect_failed);
    CHECK(ms_since(start) < 800);
}

template <typename Net>
void silent_server_times_out_with_unknown_outcome() {
    typename Net::Silent silent;
    Client<Net> c(silent.endpoint(), 300);
    Lock lock(c.conn, "it:silent");
    const auto start = std::chrono::steady_clock::now();
    CHECK_EQ(lock.try_acquire(1000, 2000), Status::unknown_outcome);
    const auto took = ms_since(start);
    if (!CHECK(took >= 290 && took < 800)) std::printf("      took %lld ms\n", as_ll(took));
    CHECK(!lock.held());
}

}  // namespace lock_cases

// Registers every case above as a TEST of this binary, over transport Net.
#define RESPLOCK_LOCK_CASE(Net, name) \
    TEST(name) {                      \
        lock_cases::name<Net>();      \
    }
#define RESPLOCK_LOCK_CASES(Net)                                                       \
    TEST(server_started) {                                                             \
        lock_cases::server_started();                                                  \
    }                                                                                  \
    RESPLOCK_LOCK_CASE(Net, evalsha_finds_the_script_after_one_eval)                   \
    RESPLOCK_LOCK_CASE(Net, acquire_sets_the_token_with_the_ttl)                       \
    RESPLOCK_LOCK_CASE(Net, second_client_is_busy_until_release)                       \
    RESPLOCK_LOCK_CASE(Net, release_by_a_stale_holder_is_not_owner_and_leaves_the_key) \
    RESPLOCK_LOCK_CASE(Net, release_after_expiry_is_expired)                           \
    RESPLOCK_LOCK_CASE(Net, extend_resets_the_ttl_only_for_the_owner)                  \
    RESPLOCK_LOCK_CASE(Net, noscript_fallback_after_script_flush)                      \
    RESPLOCK_LOCK_CASE(Net, try_acquire_waits_for_the_holders_expiry)                  \
    RESPLOCK_LOCK_CASE(Net, try_acquire_gives_up_at_the_deadline)                      \
    RESPLOCK_LOCK_CASE(Net, a_key_of_another_type_is_busy_not_corrupted)               \
    RESPLOCK_LOCK_CASE(Net, binary_key_and_value_round_trip)                           \
    RESPLOCK_LOCK_CASE(Net, unreachable_server_fails_fast_and_never_holds)             \
    RESPLOCK_LOCK_CASE(Net, silent_server_times_out_with_unknown_outcome)

#endif  // RESPLOCK_TESTS_LOCK_CASES_HPP
