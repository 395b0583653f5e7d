// Renewer over the mock port and its fake clock: the ttl/3 schedule to the millisecond, retries,
// loss by the server's answer and by validity running out, release, capacity and unwatch.
#include <cstdio>
#include <new>

#include "check.hpp"
#include "mock_connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/mock.hpp"
#include "resplock/variants/renewer.hpp"
#include "wire.hpp"

using resplock::Connection;
using resplock::Lock;
using resplock::Renewer;
using resplock::Status;
using resplock::mock::MockPort;

namespace {

using wire::owner_sha;
using wire::token0;
using wire::token1;

// What the lost callback saw.
struct Lost {
    int calls = 0;
    void* lock = nullptr;
    Status why = Status::ok;
    Renewer* renewer = nullptr;  // set: the callback also checks the slot is already free
    std::size_t watching_inside = 99;

    static void record(void* user, void* lock, Status why) {
        auto& l = *static_cast<Lost*>(user);
        ++l.calls;
        l.lock = lock;
        l.why = why;
        if (l.renewer != nullptr) {
            l.watching_inside = l.renewer->watching();
            l.renewer->unwatch(lock);  // allowed, and a no-op by now
            // Releasing from the callback is allowed too: after a loss it sends nothing.
            (void)static_cast<Lock*>(lock)->release();
        }
    }
};

struct Fixture : support::MockConnection<> {
    Lock lock;
    Renewer renewer;
    Lost lost;

    explicit Fixture(std::uint32_t timeout_ms = 2000)
        : MockConnection(support::with_timeout(timeout_ms)), lock(conn, "k") {}
    // Acquires "k" with token0 and a 900 ms TTL (drift 11 ms: 889 ms of validity) and watches it.
    void held_and_watched() {
        mock.on_connect()
            .expect(wire::cmd({"SET", "k", token0, "NX", "PX", "900"}))
            .reply("+OK\r\n");
        CHECK_EQ(lock.acquire(900), Status::ok);
        CHECK_EQ(renewer.watch(lock, 900, &Lost::record, &lost), Status::ok);
    }
    void expect_extend(std::string_view reply) {
        mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0, "900"})).reply(reply);
    }
    std::uint32_t tick() { return renewer.tick(mock.now_ms); }
};

}  // namespace

TEST(renews_when_a_third_of_the_ttl_has_passed_not_before) {
    Fixture f;
    f.held_and_watched();
    CHECK_EQ(f.tick(), 300U);
    f.mock.advance(299);
    CHECK_EQ(f.tick(), 1U);  // no request: any send would be a mismatch
    CHECK(f.mock.done());
    f.mock.advance(1);
    f.expect_extend(":1\r\n");
    CHECK_EQ(f.tick(), 300U);
    CHECK(f.mock.done());
    CHECK_EQ(f.lost.calls, 0);
    CHECK_EQ(f.lock.remaining_ms(), 889U);  // validity restarted by the renewal
}

TEST(reschedules_a_third_of_the_ttl_after_each_success) {
    Fixture f;
    f.held_and_watched();
    (void)f.tick();
    for (int i = 0; i < 5; ++i) {
        f.mock.advance(299);
        CHECK_EQ(f.tick(), 1U);
        CHECK(f.mock.done());
        f.mock.advance(1);
        f.expect_extend(":1\r\n");
        CHECK_EQ(f.tick(), 300U);
        CHECK(f.mock.done());
    }
    CHECK_EQ(f.renewer.watching(), 1U);
    CHECK_EQ(f.lost.calls, 0);
}

TEST(tick_called_late_renews_at_once) {
    Fixture f;
    f.held_and_watched();
    f.mock.advance(500);  // the caller did not tick for a while
    f.expect_extend(":1\r\n");
    CHECK_EQ(f.tick(), 300U);
    CHECK(f.mock.done());
}

TEST(lock_watched_late_renews_after_half_its_validity_left) {
    Fixture f;
    f.mock.on_connect().expect(wire::cmd({"SET", "k", token0, "NX", "PX", "900"})).reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(900), Status::ok);
    f.mock.advance(601);  // 288 ms left: a third of the TTL would be too late to be safe
    CHECK_EQ(f.renewer.watch(f.lock, 900, &Lost::record, &f.lost), Status::ok);
    f.mock.advance(10);
    CHECK_EQ(f.tick(), 134U);  // 144 ms after watch()
    f.mock.advance(133);
    CHECK_EQ(f.tick(), 1U);
    CHECK(f.mock.done());
    f.mock.advance(1);
    f.expect_extend(":1\r\n");
    CHECK_EQ(f.tick(), 300U);
    CHECK(f.mock.done());
}

TEST(not_owner_reply_reports_lost_once_and_sends_nothing_more) {
    Fixture f;
    f.held_and_watched();
    f.lost.renewer = &f.renewer;
    (void)f.tick();
    f.mock.advance(300);
    f.expect_extend(":-1\r\n");
    CHECK_EQ(f.tick(), Renewer::idle_ms);
    CHECK(f.mock.done());
    CHECK_EQ(f.lost.calls, 1);
    CHECK_EQ(f.lost.why, Status::not_owner);
    CHECK(f.lost.lock == &f.lock);
    CHECK_EQ(f.lost.watching_inside, 0U);  // the slot was freed before the callback
    CHECK_EQ(f.renewer.watching(), 0U);
    for (int i = 0; i < 10; ++i) {
        f.mock.advance(300);
        CHECK_EQ(f.tick(), Renewer::idle_ms);
    }
    CHECK(f.mock.done());  // no request after the loss
    CHECK_EQ(f.lost.calls, 1);
}

TEST(key_gone_reply_reports_expired) {
    Fixture f;
    f.held_and_watched();
    (void)f.tick();
    f.mock.advance(300);
    f.expect_extend(":0\r\n");
    (void)f.tick();
    CHECK(f.mock.done());
    CHECK_EQ(f.lost.calls, 1);
    CHECK_EQ(f.lost.why, Status::expired);
    CHECK_EQ(f.renewer.watching(), 0U);
}

TEST(transient_failure_keeps_the_lock_and_retries_soon) {
    Fixture f;
    f.held_and_watched();
    (void)f.tick();
    f.mock.advance(300);
    // The server ran no script (BUSY): not a "no", so retry after min(ttl/10, left/2) = 90 ms.
    f.expect_extend("-BUSY Redis is busy running a script\r\n");
    CHECK_EQ(f.tick(), 90U);
    CHECK(f.mock.done());
    CHECK_EQ(f.lost.calls, 0);
    CHECK_EQ(f.renewer.watching(), 1U);
    f.mock.advance(89);
    CHECK_EQ(f.tick(), 1U);
    CHECK(f.mock.done());
    f.mock.advance(1);
    f.expect_extend(":1\r\n");
    CHECK_EQ(f.tick(), 300U);
    CHECK(f.mock.done());
    CHECK_EQ(f.lost.calls, 0);
}

namespace {

// An unreachable server that swallows every request: connect succeeds, each reply times out.
struct Silent {
    int requests = 0;
    static void refill(void* user, MockPort& m, MockPort::Call call) {
        if (call == MockPort::Call::connect) m.on_connect();
        if (call == MockPort::Call::recv) {
            ++static_cast<Silent*>(user)->requests;
            m.recv_timeout();
        }
    }
};

}  // namespace

TEST(no_reply_until_validity_ends_is_lost_at_that_tick_no_later) {
    Fixture f(100);  // each renewal waits 100 ms for its reply
    f.held_and_watched();
    Silent silent;
    f.mock.accept_any_send = true;
    f.mock.on_empty(&Silent::refill, &silent);
    // The caller's loop: tick, then wait until now + the returned ms (if that is still ahead).
    std::uint32_t next_at = f.mock.now_ms + f.tick();
    int ticks = 0;
    while (f.lost.calls == 0 && ticks < 100) {
        const auto ahead = static_cast<std::int32_t>(next_at - f.mock.now_ms);
        if (ahead > 0) f.mock.advance(static_cast<std::uint32_t>(ahead));
        const std::uint32_t now = f.mock.now_ms;
        next_at = now + f.renewer.tick(now);
        ++ticks;
        if (f.lock.remaining_ms() == 0) break;
        CHECK_EQ(f.lost.calls, 0);  // never reported while validity is left
        CHECK_EQ(f.renewer.watching(), 1U);
    }
    // Validity ran out during this tick's renewal: reported lost by it, not by a later one.
    CHECK_EQ(f.lock.remaining_ms(), 0U);
    CHECK_EQ(f.lost.calls, 1);
    CHECK_EQ(f.lost.why, Status::expired);
    CHECK_EQ(silent.requests, 6);  // at 300, 400, ... 800 ms: each waits 100 ms, the last 89
    const int sent = silent.requests;
    f.mock.advance(1000);
    CHECK_EQ(f.tick(), Renewer::idle_ms);
    CHECK_EQ(silent.requests, sent);
    CHECK(f.mock.mismatch() == nullptr);
}

TEST(validity_ending_between_ticks_is_reported_by_the_next_tick) {
    Fixture f;
    f.held_and_watched();
    (void)f.tick();
    f.mock.advance(300);
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0, "900"})).recv_closed();
    // Connection closed: retried after 90 ms; but the caller comes back only after 589 ms.
    CHECK_EQ(f.tick(), 90U);
    f.mock.advance(588);
    CHECK_EQ(f.lock.remaining_ms(), 1U);
    f.mock.on_connect();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0, "900"})).recv_closed();
    CHECK_EQ(f.tick(), 1U);  // retried, failed, one ms left: call again when it ends
    CHECK_EQ(f.lost.calls, 0);
    f.mock.advance(1);
    CHECK_EQ(f.tick(), Renewer::idle_ms);  // no request: validity is gone
    CHECK(f.mock.done());
    CHECK_EQ(f.lost.calls, 1);
    CHECK_EQ(f.lost.why, Status::expired);
}

namespace {

// A lost callback that watches another lock in the slot just freed.
struct WatchOther {
    Renewer* renewer;
    Lock* other;
    static void on_lost(void* user, void*, Status) {
        auto& w = *static_cast<WatchOther*>(user);
        CHECK_EQ(w.renewer->watch(*w.other, 300), Status::ok);
    }
};

}  // namespace

TEST(lock_watched_by_a_lost_callback_is_scheduled_at_the_next_tick) {
    Fixture f;
    Lock other(f.conn, "j");
    WatchOther w{&f.renewer, &other};
    f.mock.on_connect().expect(wire::cmd({"SET", "k", token0, "NX", "PX", "900"})).reply("+OK\r\n");
    REQUIRE_EQ(f.lock.acquire(900), Status::ok);
    REQUIRE_EQ(f.renewer.watch(f.lock, 900, &WatchOther::on_lost, &w), Status::ok);
    f.mock.advance(889);  // k's validity is gone before any tick
    f.mock.expect(wire::cmd({"SET", "j", token1, "NX", "PX", "300"})).reply("+OK\r\n");
    REQUIRE_EQ(other.acquire(300), Status::ok);
    // k is reported lost; j, watched from the callback into k's slot, is due at once (the clock
    // is past 2^31 here, where an unscheduled slot must not read as due in 2^32 - now ms).
    CHECK_EQ(f.tick(), 0U);
    CHECK(f.renewer.watches(&other));
    // Scheduled now: a third of its TTL from its watch.
    CHECK_EQ(f.tick(), 100U);
    CHECK(f.mock.done());
}

TEST(released_lock_gets_no_request_and_no_callback) {
    Fixture f;
    f.held_and_watched();
    (void)f.tick();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0})).reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    f.mock.advance(300);
    CHECK_EQ(f.tick(), Renewer::idle_ms);
    CHECK(f.mock.done());
    CHECK_EQ(f.renewer.watching(), 0U);
    CHECK_EQ(f.lost.calls, 0);
}

TEST(released_and_acquired_again_is_not_renewed) {
    Fixture f;
    f.held_and_watched();
    (void)f.tick();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0})).reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    f.mock.expect(wire::cmd({"SET", "k", token1, "NX", "PX", "900"})).reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(900), Status::ok);  // a new hold, not watched
    f.mock.advance(300);
    CHECK_EQ(f.tick(), Renewer::idle_ms);
    CHECK(f.mock.done());
    CHECK_EQ(f.lost.calls, 0);
}

TEST(unwatch_stops_renewals) {
    Fixture f;
    f.held_and_watched();
    CHECK(f.renewer.watches(&f.lock));
    f.renewer.unwatch(&f.lock);
    CHECK(!f.renewer.watches(&f.lock));
    CHECK_EQ(f.renewer.watching(), 0U);
    f.mock.advance(300);
    CHECK_EQ(f.tick(), Renewer::idle_ms);
    CHECK(f.mock.done());
    f.renewer.unwatch(&f.lock);  // not watched: nothing happens
    CHECK_EQ(f.lost.calls, 0);
    CHECK(f.lock.held());  // unwatch sends nothing
}

TEST(watch_refuses_bad_arguments) {
    Fixture f;
    CHECK_EQ(f.renewer.watch(f.lock, 900), Status::invalid_argument);  // not held
    f.held_and_watched();
    CHECK_EQ(f.renewer.watch(f.lock, 900), Status::invalid_argument);  // already watched
    f.renewer.unwatch(&f.lock);
    CHECK_EQ(f.renewer.watch(f.lock, 0), Status::invalid_argument);
    CHECK_EQ(f.renewer.watch(f.lock, 0x80000000U), Status::invalid_argument);
    CHECK_EQ(f.renewer.watching(), 0U);
    f.mock.advance(889);  // validity ran out: no longer held
    CHECK_EQ(f.renewer.watch(f.lock, 900), Status::invalid_argument);
    CHECK_EQ(f.renewer.watching(), 0U);
    CHECK(f.mock.done());
}

TEST(full_table_is_refused_with_too_large) {
    Fixture f;
    // Every request is answered +OK: all the acquires succeed.
    f.mock.accept_any_send = true;
    f.mock.on_empty(
        [](void*, MockPort& m, MockPort::Call call) {
            if (call == MockPort::Call::connect) m.on_connect();
            if (call == MockPort::Call::recv) m.reply("+OK\r\n");
        },
        nullptr);
    constexpr int n = RESPLOCK_MAX_RENEWED + 1;
    char keys[n][8];
    alignas(Lock) unsigned char storage[n][sizeof(Lock)];
    Lock* locks[n];
    for (int i = 0; i < n; ++i) {
        const int len = std::snprintf(keys[i], sizeof keys[i], "k%d", i);
        locks[i] = new (storage[i]) Lock(f.conn, {keys[i], static_cast<std::size_t>(len)});
        CHECK_EQ(locks[i]->acquire(900), Status::ok);
    }
    for (int i = 0; i < n - 1; ++i)
        CHECK_EQ(f.renewer.watch(*locks[i], 900), Status::ok);
    CHECK_EQ(f.renewer.watching(), static_cast<std::size_t>(RESPLOCK_MAX_RENEWED));
    CHECK_EQ(f.renewer.watch(*locks[n - 1], 900), Status::too_large);
    CHECK(!f.renewer.watches(locks[n - 1]));
    f.renewer.unwatch(locks[0]);
    CHECK_EQ(f.renewer.watch(*locks[n - 1], 900), Status::ok);
    CHECK_EQ(f.renewer.watching(), static_cast<std::size_t>(RESPLOCK_MAX_RENEWED));
    CHECK(f.mock.mismatch() == nullptr);
}

TEST(tick_returns_the_earliest_due_and_idle_when_empty) {
    Fixture f;
    CHECK_EQ(f.tick(), Renewer::idle_ms);
    f.held_and_watched();
    Lock other(f.conn, "j");
    f.mock.expect(wire::cmd({"SET", "j", token1, "NX", "PX", "300"})).reply("+OK\r\n");
    CHECK_EQ(other.acquire(300), Status::ok);
    CHECK_EQ(f.renewer.watch(other, 300), Status::ok);
    CHECK_EQ(f.tick(), 100U);  // j's renewal comes before k's
    f.mock.advance(100);
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "j", token1, "300"})).reply(":1\r\n");
    CHECK_EQ(f.tick(), 100U);
    f.mock.advance(100);
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "j", token1, "300"})).reply(":1\r\n");
    CHECK_EQ(f.tick(), 100U);  // k is due at 300, j again at 300
    f.mock.advance(100);
    // Both due: j first, since it has less validity left (195 ms against k's 589).
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "j", token1, "300"})).reply(":1\r\n");
    f.expect_extend(":1\r\n");
    CHECK_EQ(f.tick(), 100U);
    CHECK(f.mock.done());
}

namespace {

// A server that confirms every renewal (":1").
struct Confirming {
    int requests = 0;
    static void refill(void* user, MockPort& m, MockPort::Call call) {
        if (call == MockPort::Call::connect) m.on_connect();
        if (call == MockPort::Call::recv) {
            ++static_cast<Confirming*>(user)->requests;
            m.reply(":1\r\n");
        }
    }
};

// The caller's loop over the fake clock: tick, then wait until now + the returned ms, until
// `until` (port time) or `stop` says so.
template <class Stop>
void drive(Renewer& renewer, MockPort& clock, std::uint32_t for_ms, Stop stop) {
    const std::uint32_t end = clock.now_ms + for_ms;
    std::uint32_t next_at = clock.now_ms + renewer.tick(clock.now_ms);
    for (int ticks = 0; ticks < 1000 && static_cast<std::int32_t>(end - clock.now_ms) > 0;
         ++ticks) {
        const auto ahead = static_cast<std::int32_t>(next_at - clock.now_ms);
        if (ahead > 0) clock.advance(static_cast<std::uint32_t>(ahead));
        const std::uint32_t now = clock.now_ms;
        next_at = now + renewer.tick(now);
        if (stop()) return;
    }
}

}  // namespace

TEST(loss_is_reported_when_validity_falls_to_the_margin) {
    Fixture f;  // 2000 ms timeout: only the margin bounds the wait
    f.mock.on_connect().expect(wire::cmd({"SET", "k", token0, "NX", "PX", "900"})).reply("+OK\r\n");
    REQUIRE_EQ(f.lock.acquire(900), Status::ok);
    // 200 ms to stop the protected work: reported lost with 200 ms of validity still left.
    CHECK_EQ(f.renewer.watch(f.lock, 900, &Lost::record, &f.lost, 900), Status::invalid_argument);
    REQUIRE_EQ(f.renewer.watch(f.lock, 900, &Lost::record, &f.lost, 200), Status::ok);
    Silent silent;
    f.mock.accept_any_send = true;
    f.mock.on_empty(&Silent::refill, &silent);
    drive(f.renewer, f.mock, 2000, [&] {
        if (f.lost.calls == 0) CHECK(f.lock.remaining_ms() > 200U);
        return f.lost.calls != 0;
    });
    CHECK_EQ(f.lost.calls, 1);
    CHECK_EQ(f.lost.why, Status::expired);
    // The renewal at 300 ms waited for its reply until the margin (689 ms), and no longer.
    CHECK_EQ(f.lock.remaining_ms(), 200U);
    CHECK_EQ(silent.requests, 1);
    CHECK(f.mock.mismatch() == nullptr);
}

// Two locks on two servers, one clock: server A stops answering. A renewal of A's lock must not
// hold up the renewal of B's lock until B's validity is gone too.
TEST(a_silent_server_costs_no_lock_on_another_server) {
    Fixture f;  // lock "k" on server A (f.mock), 2000 ms timeout
    f.mock.on_connect().expect(wire::cmd({"SET", "k", token0, "NX", "PX", "900"})).reply("+OK\r\n");
    REQUIRE_EQ(f.lock.acquire(900), Status::ok);

    static MockPort* clock = nullptr;  // server B's port reads server A's clock
    clock = &f.mock;
    MockPort b;
    resplock_port_t b_port = b.port();
    b_port.now_ms = [](void*) { return clock->now_ms; };
    b.random_next = 0x10;
    char b_buf[512];
    Connection b_conn(b_port, f.config, b_buf, sizeof b_buf);
    Lock j(b_conn, "j");
    b.on_connect().expect(wire::cmd({"SET", "j", token1, "NX", "PX", "900"})).reply("+OK\r\n");
    REQUIRE_EQ(j.acquire(900), Status::ok);

    Lost lost_j;
    REQUIRE_EQ(f.renewer.watch(f.lock, 900, &Lost::record, &f.lost), Status::ok);
    REQUIRE_EQ(f.renewer.watch(j, 900, &Lost::record, &lost_j), Status::ok);
    Silent silent;
    f.mock.accept_any_send = true;
    f.mock.on_empty(&Silent::refill, &silent);
    Confirming confirming;
    b.accept_any_send = true;
    b.on_empty(&Confirming::refill, &confirming);

    drive(f.renewer, f.mock, 3000, [&] {
        CHECK(j.remaining_ms() > 0U);
        return false;
    });
    CHECK_EQ(f.lost.calls, 1);  // A's lock: lost when its validity ran out
    CHECK_EQ(f.lost.why, Status::expired);
    CHECK_EQ(lost_j.calls, 0);  // B's lock: renewed all along
    CHECK(f.renewer.watches(&j));
    CHECK(j.remaining_ms() > 0U);
    CHECK(confirming.requests >= 9);  // every 300 ms over 3 s
    CHECK(f.mock.mismatch() == nullptr);
    CHECK(b.mismatch() == nullptr);
}

namespace {

// A server that confirms every renewal after a round trip of rtt_ms, and records the lock's
// validity when each renewal went out (the mock clock stands still between send and recv).
struct Timed {
    const Lock* lock = nullptr;
    std::uint32_t rtt_ms = 0;
    int requests = 0;
    std::uint32_t least_left_ms = 0xFFFFFFFFU;  // the least validity left when one went out
    static void refill(void* user, MockPort& m, MockPort::Call call) {
        auto& t = *static_cast<Timed*>(user);
        if (call == MockPort::Call::connect) m.on_connect();
        if (call == MockPort::Call::recv) {
            ++t.requests;
            const std::uint32_t left = t.lock->remaining_ms();
            if (left < t.least_left_ms) t.least_left_ms = left;
            if (t.rtt_ms > 0) m.recv_delay(t.rtt_ms);
            m.reply(":1\r\n");
        }
    }
};

}  // namespace

// TTL 3000 ms: a renewal grants 2968 ms of validity (drift 32 ms), only 768 ms beyond a 2200 ms
// margin, less than a third of the TTL. Each renewal must come before the margin is reached.
TEST(margin_above_two_thirds_of_the_ttl_is_renewed_before_validity_falls_to_it) {
    Fixture f;
    f.mock.on_connect()
        .expect(wire::cmd({"SET", "k", token0, "NX", "PX", "3000"}))
        .reply("+OK\r\n");
    REQUIRE_EQ(f.lock.acquire(3000), Status::ok);
    REQUIRE_EQ(f.renewer.watch(f.lock, 3000, &Lost::record, &f.lost, 2200), Status::ok);
    Timed server{&f.lock, 5};
    f.mock.accept_any_send = true;
    f.mock.on_empty(&Timed::refill, &server);
    drive(f.renewer, f.mock, 10000, [&] {
        CHECK(f.lock.remaining_ms() > 2200U);
        return f.lost.calls != 0;
    });
    CHECK_EQ(f.lost.calls, 0);
    CHECK(f.renewer.watches(&f.lock));
    // First at 384 ms (half of 768), then every 381 ms, half of the 763 ms left beyond the margin
    // once the 5 ms reply is in: 27 renewals by 10,290 ms (the first tick past 10 s), the one at
    // 384 ms with the least validity left, 384 ms above the margin.
    CHECK_EQ(server.requests, 27);
    CHECK(server.least_left_ms > 2200U);
    CHECK_EQ(server.least_left_ms, 2584U);
    CHECK(f.mock.mismatch() == nullptr);
}

// A renewal grants ttl - drift of validity; with less than 2 ms of it beyond the margin, the next
// renewal (1 ms later at the soonest) could not come before the lock is reported lost.
TEST(watch_refuses_a_margin_no_renewal_can_outlast) {
    Fixture f;
    f.mock.on_connect()
        .expect(wire::cmd({"SET", "k", token0, "NX", "PX", "3000"}))
        .reply("+OK\r\n");
    REQUIRE_EQ(f.lock.acquire(3000), Status::ok);
    // 2968 ms of validity after a renewal.
    CHECK_EQ(f.renewer.watch(f.lock, 3000, &Lost::record, &f.lost, 2968), Status::invalid_argument);
    CHECK_EQ(f.renewer.watch(f.lock, 3000, &Lost::record, &f.lost, 2967), Status::invalid_argument);
    CHECK_EQ(f.renewer.watching(), 0U);
    // 2 ms beyond the margin: accepted, and kept alive by a renewal every millisecond.
    REQUIRE_EQ(f.renewer.watch(f.lock, 3000, &Lost::record, &f.lost, 2966), Status::ok);
    Timed server{&f.lock, 0};
    f.mock.accept_any_send = true;
    f.mock.on_empty(&Timed::refill, &server);
    drive(f.renewer, f.mock, 50, [&] { return f.lost.calls != 0; });
    CHECK_EQ(f.lost.calls, 0);
    CHECK_EQ(server.requests, 50);
    CHECK_EQ(server.least_left_ms, 2967U);
    // The smallest TTLs: 3 grants 1 ms (refused with any margin), 4 grants 2 ms (margin 0 only).
    f.renewer.unwatch(&f.lock);
    CHECK_EQ(f.renewer.watch(f.lock, 3), Status::invalid_argument);
    CHECK_EQ(f.renewer.watch(f.lock, 4, nullptr, nullptr, 1), Status::invalid_argument);
    CHECK_EQ(f.renewer.watch(f.lock, 4), Status::ok);
}
