// The Renewer and RenewerThread against a real redis-server: a 300 ms lock kept for seconds,
// and each way of losing it (key deleted, key taken over, server gone) reported in time.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include <pthread.h>

#include "check.hpp"
#include "ports.hpp"
#include "redis_server.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/posix.h"
#include "resplock/posix/renewer_thread.hpp"
#include "resplock/variants/renewer.hpp"

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::LockInfo;
using resplock::LockState;
using resplock::Renewer;
using resplock::RenewerThread;
using resplock::Status;
using Clock = std::chrono::steady_clock;

namespace {

support::RedisServer& server() {
    static support::RedisServer s;
    return s;
}

struct Client {
    resplock_posix_t ctx;
    resplock_port_t port = support::posix_port(ctx);
    ConnectionConfig config;
    char buf[512];
    Connection conn;

    explicit Client(std::uint16_t to, std::uint32_t timeout_ms = 2000)
        : config(make(to, timeout_ms)), conn(port, config, buf, sizeof buf) {}
    static ConnectionConfig make(std::uint16_t to, std::uint32_t timeout_ms) {
        ConnectionConfig c;
        c.port = to;
        c.timeout_ms = timeout_ms;
        return c;
    }
    std::uint32_t now() const { return port.now_ms(port.ctx); }
};

long long ms_since(Clock::time_point t) {
    return static_cast<long long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count());
}

void sleep_ms(std::uint32_t ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// What the lost callback saw, from whichever thread it ran on.
struct Lost {
    std::mutex m;
    std::condition_variable cv;
    int calls = 0;
    Status why = Status::ok;
    std::uint32_t remaining_then = 99;
    Clock::time_point at;
    pthread_t thread{};

    static void record(void* user, void* lock, Status why) {
        auto& l = *static_cast<Lost*>(user);
        std::lock_guard<std::mutex> g(l.m);
        ++l.calls;
        l.why = why;
        l.remaining_then = static_cast<Lock*>(lock)->remaining_ms();
        l.at = Clock::now();
        l.thread = pthread_self();
        l.cv.notify_all();
    }
    int count() {
        std::lock_guard<std::mutex> g(m);
        return calls;
    }
    bool wait_for(std::uint32_t ms) {
        std::unique_lock<std::mutex> g(m);
        return cv.wait_for(g, std::chrono::milliseconds(ms), [this] { return calls > 0; });
    }
};

// The caller's loop: tick, then sleep until the next due time (at most `slice` ms, so `each`
// runs often), until `ms` have passed or `stop` says so.
template <typename Each>
void drive(Renewer& r, const Client& c, std::uint32_t ms, Each each, std::uint32_t slice = 10) {
    const Clock::time_point start = Clock::now();
    while (ms_since(start) < ms) {
        const std::uint32_t next = r.tick(c.now());
        if (!each()) return;
        sleep_ms(next < slice ? next : slice);
    }
}

}  // namespace

TEST(tick_keeps_a_300ms_lock_for_2s) {
    Client c(server().port());
    Lock lock(c.conn, "renew:tick");
    REQUIRE(lock.acquire(300) == Status::ok);
    const std::string token(lock.token());
    Renewer r;
    Lost lost;
    REQUIRE(r.watch(lock, 300, &Lost::record, &lost) == Status::ok);
    // A second client reads the key (value and PTTL in one script) while the first renews.
    Client probe_client(server().port());
    Lock probe(probe_client.conn, "renew:tick");
    REQUIRE(probe.adopt(token) == Status::ok);
    long long min_pttl = 1000000;
    int reads = 0;
    drive(r, c, 2000, [&] {
        LockInfo info;
        CHECK_EQ(probe.query(info), Status::ok);
        CHECK(info.state == LockState::held_by_me);
        CHECK(info.ttl_ms > 0);
        if (info.ttl_ms < min_pttl) min_pttl = info.ttl_ms;
        ++reads;
        return !check::failed();
    });
    std::printf("    %d reads over 2 s, lowest PTTL %lld ms\n", reads, min_pttl);
    CHECK(reads > 20);
    CHECK_EQ(lost.count(), 0);
    CHECK(lock.held());
    CHECK(server().cli({"GET", "renew:tick"}) == token);
    CHECK(std::atoll(server().cli({"PTTL", "renew:tick"}).c_str()) > 0);
    CHECK_EQ(lock.release(), Status::ok);
    CHECK(server().cli({"EXISTS", "renew:tick"}) == "0");
}

// A renewal of a 3 s lock leaves 768 ms of validity beyond a 2.2 s margin, less than a third of
// the TTL: every renewal must come sooner than ttl/3 (a fixed ttl/3 reported it lost at 1.2 s).
TEST(tick_keeps_a_lock_whose_margin_is_above_two_thirds_of_its_ttl) {
    Client c(server().port());
    Lock lock(c.conn, "renew:margin");
    REQUIRE(lock.acquire(3000) == Status::ok);
    Renewer r;
    Lost lost;
    REQUIRE(r.watch(lock, 3000, &Lost::record, &lost, 2200) == Status::ok);
    std::uint32_t least_left = 3000;
    drive(r, c, 3000, [&] {
        const std::uint32_t left = lock.remaining_ms();
        if (left < least_left) least_left = left;
        return lost.count() == 0;
    });
    std::printf("    least validity left: %u ms (margin 2200)\n", least_left);
    CHECK_EQ(lost.count(), 0);
    CHECK(least_left > 2200U);
    CHECK(r.watches(&lock));
    CHECK(std::atoll(server().cli({"PTTL", "renew:margin"}).c_str()) > 2200);
    CHECK_EQ(lock.release(), Status::ok);
}

TEST(key_deleted_is_reported_lost_within_a_third_of_the_ttl) {
    Client c(server().port());
    Lock lock(c.conn, "renew:deleted");
    REQUIRE(lock.acquire(300) == Status::ok);
    Renewer r;
    Lost lost;
    REQUIRE(r.watch(lock, 300, &Lost::record, &lost) == Status::ok);
    drive(r, c, 150, [] { return true; });
    REQUIRE_EQ(lost.count(), 0);
    CHECK(server().cli({"DEL", "renew:deleted"}) == "1");
    const Clock::time_point deleted = Clock::now();
    drive(r, c, 2000, [&] { return lost.count() == 0; });
    REQUIRE_EQ(lost.count(), 1);
    const long long after =
        std::chrono::duration_cast<std::chrono::milliseconds>(lost.at - deleted).count();
    std::printf("    lost %lld ms after the DEL, as %s\n", after, resplock::to_string(lost.why));
    CHECK(lost.why == Status::expired || lost.why == Status::not_owner);
    CHECK(after <= 100 + 300);  // the next renewal, due within ttl/3, finds the key gone
    CHECK(!lock.held());
    CHECK_EQ(r.watching(), 0U);
    CHECK(server().cli({"EXISTS", "renew:deleted"}) == "0");
}

TEST(server_killed_is_reported_lost_when_validity_ends) {
    support::RedisServer own;
    Client c(own.port(), 100);
    Lock lock(c.conn, "renew:killed");
    REQUIRE(lock.acquire(300) == Status::ok);
    Renewer r;
    Lost lost;
    REQUIRE(r.watch(lock, 300, &Lost::record, &lost) == Status::ok);
    drive(r, c, 200, [] { return true; });
    REQUIRE_EQ(lost.count(), 0);
    own.kill();
    // Nothing renews the lock from here on: its validity ends at the latest now + remaining.
    const Clock::time_point killed = Clock::now();
    const std::uint32_t left = lock.remaining_ms();
    drive(r, c, 3000, [&] { return lost.count() == 0; });
    REQUIRE_EQ(lost.count(), 1);
    const long long after =
        std::chrono::duration_cast<std::chrono::milliseconds>(lost.at - killed).count();
    std::printf("    validity left at kill %u ms, lost reported after %lld ms\n", left, after);
    CHECK_EQ(lost.why, Status::expired);
    CHECK_EQ(lost.remaining_then, 0U);  // not reported while validity was left
    CHECK(after <= static_cast<long long>(left) + 300);
    // Never "held" again after the report.
    drive(r, c, 200, [&] {
        CHECK(!lock.held());
        return true;
    });
    CHECK_EQ(lost.count(), 1);
}

TEST(thread_keeps_a_300ms_lock_while_the_caller_sleeps) {
    Client c(server().port());
    Lock lock(c.conn, "renew:thread");
    Renewer r;
    Lost lost;
    RenewerThread thread(r, c.port);
    REQUIRE(thread.start() == Status::ok);
    CHECK_EQ(thread.start(), Status::invalid_argument);
    sleep_ms(50);  // let it tick once and sleep: nothing is watched yet
    {
        // The thread is idle (nothing watched): unlock() must wake it to schedule this lock.
        std::lock_guard<RenewerThread> g(thread);
        REQUIRE(lock.acquire(300) == Status::ok);
        REQUIRE(r.watch(lock, 300, &Lost::record, &lost) == Status::ok);
    }
    std::string token;
    {
        std::lock_guard<RenewerThread> g(thread);
        token = std::string(lock.token());
    }
    const Clock::time_point start = Clock::now();
    int reads = 0;
    while (ms_since(start) < 1500) {
        sleep_ms(100);
        CHECK(std::atoll(server().cli({"PTTL", "renew:thread"}).c_str()) > 0);
        ++reads;
    }
    CHECK(reads >= 5);
    {
        std::lock_guard<RenewerThread> g(thread);
        CHECK(lock.held());
        CHECK_EQ(r.watching(), 1U);
    }
    CHECK(server().cli({"GET", "renew:thread"}) == token);
    thread.stop();
    thread.stop();  // idempotent
    CHECK_EQ(lost.count(), 0);
    CHECK_EQ(lock.release(), Status::ok);
    CHECK(server().cli({"EXISTS", "renew:thread"}) == "0");
}

TEST(thread_reports_a_key_taken_over_by_another_token) {
    Client c(server().port());
    Lock lock(c.conn, "renew:taken");
    REQUIRE(lock.acquire(300) == Status::ok);
    Renewer r;
    Lost lost;
    REQUIRE(r.watch(lock, 300, &Lost::record, &lost) == Status::ok);
    RenewerThread thread(r, c.port);
    REQUIRE(thread.start() == Status::ok);
    sleep_ms(150);
    CHECK_EQ(lost.count(), 0);
    CHECK(server().cli({"SET", "renew:taken", "someone-else", "PX", "10000"}) == "OK");
    const Clock::time_point taken = Clock::now();
    CHECK(lost.wait_for(2000));
    const long long after = ms_since(taken);
    std::printf("    lost reported after %lld ms\n", after);
    {
        std::lock_guard<RenewerThread> g(thread);
        CHECK_EQ(lost.calls, 1);
        CHECK_EQ(lost.why, Status::not_owner);
        CHECK(pthread_equal(lost.thread, pthread_self()) == 0);  // on the renewer's thread
        CHECK_EQ(r.watching(), 0U);
        CHECK(!lock.held());
    }
    CHECK(after <= 100 + 300);
    thread.stop();
    // The lock never touched the other holder's key.
    CHECK(server().cli({"GET", "renew:taken"}) == "someone-else");
    CHECK(lock.token().empty());
}
