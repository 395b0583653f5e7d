// Lock over the mock port: every acquire, release, extend, query and wait path, including the
// EVALSHA -> EVAL fallback and the rule that a lock is never claimed without the server's OK.
#include <cstdlib>
#include <cstring>

#include "check.hpp"
#include "mock_connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/mock.hpp"
#include "wire.hpp"

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::LockGuard;
using resplock::LockInfo;
using resplock::LockState;
using resplock::Status;
using resplock::mock::MockPort;

namespace {

using wire::noscript;
using wire::owner_sha;
using wire::owner_text;
using wire::token0;
using wire::token1;
using wire::zeros;

struct Fixture : support::MockConnection<> {
    Lock lock;

    explicit Fixture(std::string_view key = "k", std::uint32_t timeout_ms = 2000)
        : MockConnection(support::with_timeout(timeout_ms)), lock(conn, key) {}

    // Scripts a successful acquire of "k" with token0.
    void acquired(std::string_view ttl = "1000") {
        mock.on_connect().expect(wire::cmd({"SET", "k", token0, "NX", "PX", ttl})).reply("+OK\r\n");
        CHECK_EQ(lock.acquire(static_cast<std::uint32_t>(std::atoi(ttl.data()))), Status::ok);
    }
};

}  // namespace

TEST(acquire_sends_set_nx_px_with_a_random_token) {
    Fixture f;
    f.mock.on_connect()
        .expect(
            "*6\r\n$3\r\nSET\r\n$1\r\nk\r\n$32\r\n000102030405060708090a0b0c0d0e0f\r\n"
            "$2\r\nNX\r\n$2\r\nPX\r\n$4\r\n1000\r\n")
        .reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK(f.lock.held());
    CHECK(f.lock.token() == token0);
    CHECK(f.mock.done());
}

TEST(remaining_subtracts_elapsed_time_and_drift) {
    Fixture f;
    f.acquired("1000");
    // drift = 1000/100 + 2 = 12 ms
    CHECK_EQ(f.lock.remaining_ms(), 988U);
    f.mock.advance(500);
    CHECK_EQ(f.lock.remaining_ms(), 488U);
    f.mock.advance(487);
    CHECK_EQ(f.lock.remaining_ms(), 1U);
    f.mock.advance(1);
    CHECK_EQ(f.lock.remaining_ms(), 0U);
    CHECK(!f.lock.held());
}

TEST(validity_counts_from_before_the_request_was_sent) {
    Fixture f;
    f.mock.on_connect()
        .expect(wire::cmd({"SET", "k", token0, "NX", "PX", "1000"}))
        .recv_delay(300)
        .reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK_EQ(f.lock.remaining_ms(), 688U);
}

TEST(acquire_busy_when_set_returns_nil) {
    Fixture f;
    f.mock.on_connect()
        .expect(wire::cmd({"SET", "k", token0, "NX", "PX", "1000"}))
        .reply("$-1\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::busy);
    CHECK(!f.lock.held());
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

TEST(acquire_reply_lost_is_unknown_outcome_never_held) {
    Fixture f("k", 100);
    f.mock.on_connect().expect(wire::cmd({"SET", "k", token0, "NX", "PX", "1000"})).recv_timeout();
    CHECK_EQ(f.lock.acquire(1000), Status::unknown_outcome);
    CHECK(!f.lock.held());
    CHECK_EQ(f.lock.remaining_ms(), 0U);
    // The token is kept so that release() can clean up if the SET did happen.
    CHECK(f.lock.token() == token0);
    f.mock.on_connect().expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0})).reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.mock.done());
}

TEST(acquire_unexpected_reply_is_protocol_error_not_held) {
    Fixture f;
    f.mock.on_connect()
        .expect(wire::cmd({"SET", "k", token0, "NX", "PX", "1000"}))
        .reply("+QUEUED\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::protocol_error);
    CHECK(!f.lock.held());
    CHECK(f.lock.token() == token0);  // the SET may have run: release() can clean up
    CHECK(f.mock.done());
}

TEST(acquire_malformed_reply_is_protocol_error_not_held) {
    Fixture f;
    f.mock.on_connect()
        .expect(wire::cmd({"SET", "k", token0, "NX", "PX", "1000"}))
        .reply("+OK\r\r");
    CHECK_EQ(f.lock.acquire(1000), Status::protocol_error);
    CHECK(!f.lock.held());
    CHECK_EQ(f.lock.remaining_ms(), 0U);
    CHECK(f.lock.token() == token0);
    CHECK(!f.conn.connected());
    CHECK(f.mock.done());
}

TEST(acquire_server_errors_are_surfaced) {
    Fixture f;
    f.mock.on_connect()
        .expect(wire::cmd({"SET", "k", token0, "NX", "PX", "1000"}))
        .reply("-OOM command not allowed when used memory > 'maxmemory'.\r\n")
        .expect(wire::cmd({"SET", "k", token1, "NX", "PX", "1000"}))
        .reply("-READONLY You can't write against a read only replica.\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::out_of_memory);
    f.mock.random_next = 0x10;
    CHECK_EQ(f.lock.acquire(1000), Status::read_only);
    CHECK(!f.lock.held());
    CHECK(f.mock.done());
}

TEST(acquire_auth_refused) {
    MockPort mock;
    const resplock_port_t port = mock.port();
    char buf[512];
    ConnectionConfig c;
    c.password = "nope";
    Connection conn(port, c, buf, sizeof buf);
    Lock lock(conn, "k");
    mock.on_connect().expect(wire::cmd({"AUTH", "nope"})).reply("-WRONGPASS invalid\r\n");
    CHECK_EQ(lock.acquire(1000), Status::auth_failed);
    CHECK(!lock.held());
    CHECK(mock.done());
}

TEST(random_source_failure_sends_nothing) {
    Fixture f;
    f.mock.random_fails = true;
    CHECK_EQ(f.lock.acquire(1000), Status::random_failed);
    CHECK_EQ(f.mock.connects, 0U);
    resplock_port_t no_random = f.mock.port();
    no_random.random = nullptr;
    char buf[512];
    Connection conn(no_random, {}, buf, sizeof buf);
    Lock lock(conn, "k");
    CHECK_EQ(lock.acquire(1000), Status::random_failed);
    CHECK_EQ(f.mock.connects, 0U);
}

TEST(invalid_arguments_send_nothing) {
    char long_key[RESPLOCK_MAX_KEY_LEN + 1];
    std::memset(long_key, 'x', sizeof long_key);
    Fixture too_long(std::string_view(long_key, sizeof long_key));
    CHECK_EQ(too_long.lock.acquire(1000), Status::invalid_argument);
    CHECK_EQ(too_long.lock.try_acquire(1000, 100), Status::invalid_argument);
    LockInfo info;
    CHECK_EQ(too_long.lock.query(info), Status::invalid_argument);
    CHECK(too_long.lock.key().empty());
    Fixture empty("");
    CHECK_EQ(empty.lock.acquire(1000), Status::invalid_argument);
    Fixture f;
    CHECK_EQ(f.lock.acquire(0), Status::invalid_argument);
    CHECK_EQ(f.lock.acquire(resplock::max_ttl_ms + 1), Status::invalid_argument);
    CHECK_EQ(f.lock.release(), Status::invalid_argument);  // no token
    CHECK_EQ(f.lock.extend(1000), Status::invalid_argument);
    CHECK_EQ(f.lock.adopt(""), Status::invalid_argument);
    char over[resplock::max_token_len + 1];
    std::memset(over, 't', sizeof over);
    CHECK_EQ(f.lock.adopt({over, sizeof over}), Status::invalid_argument);
    CHECK_EQ(f.lock.adopt({over, sizeof over - 1}), Status::ok);
    CHECK_EQ(f.mock.connects + too_long.mock.connects + empty.mock.connects, 0U);
}

TEST(longest_key_is_accepted_binary_safe) {
    char key[RESPLOCK_MAX_KEY_LEN];
    for (std::size_t i = 0; i < sizeof key; ++i)
        key[i] = static_cast<char>(i % 3 == 0 ? '\r' : i);
    const std::string_view k(key, sizeof key);
    Fixture f(k);
    f.mock.on_connect().expect(wire::cmd({"SET", k, token0, "NX", "PX", "50"})).reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(50), Status::ok);
    CHECK(f.lock.key() == k);
    CHECK(f.mock.done());
}

TEST(acquire_while_held_is_refused) {
    Fixture f;
    f.acquired();
    CHECK_EQ(f.lock.acquire(1000), Status::invalid_argument);
    CHECK(f.lock.token() == token0);
    CHECK(f.mock.done());
}

TEST(release_sends_evalsha_and_forgets_the_token) {
    Fixture f;
    f.acquired();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0})).reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(!f.lock.held());
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

TEST(release_falls_back_to_eval_on_noscript) {
    Fixture f;
    f.acquired();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0}))
        .reply(noscript)
        .expect(wire::cmd({"EVAL", owner_text, "1", "k", token0}))
        .reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.mock.done());
}

TEST(release_tells_not_owner_and_expired_apart) {
    Fixture f;
    f.acquired();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0})).reply(":-1\r\n");
    CHECK_EQ(f.lock.release(), Status::not_owner);
    CHECK(f.lock.token().empty());
    Fixture g;
    g.acquired();
    g.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0})).reply(":0\r\n");
    CHECK_EQ(g.lock.release(), Status::expired);
    CHECK(f.mock.done());
    CHECK(g.mock.done());
}

TEST(release_on_a_key_of_another_type_is_not_owner) {
    Fixture f;
    f.acquired();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0}))
        .reply("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    CHECK_EQ(f.lock.release(), Status::not_owner);
    CHECK(f.mock.done());
}

TEST(release_connection_cut_is_unknown_outcome_and_keeps_the_token) {
    Fixture f;
    f.acquired();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0})).recv_closed();
    CHECK_EQ(f.lock.release(), Status::unknown_outcome);
    CHECK(f.lock.token() == token0);
    // Retrying reconnects and completes the release.
    f.mock.on_connect().expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0})).reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.mock.done());
}

TEST(release_fallback_shares_one_deadline) {
    Fixture f("k", 100);
    f.acquired();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0}))
        .recv_delay(70)
        .reply("-NOSCRIPT No matching script.\r\n")
        .expect(wire::cmd({"EVAL", owner_text, "1", "k", token0}))
        .recv_timeout();
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.release(), Status::unknown_outcome);
    CHECK(f.mock.now_ms - start <= 100U);
    CHECK(f.mock.done());
}

TEST(release_retries_a_release_the_server_refused_before_running_it) {
    Fixture f;
    f.acquired();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0}))
        .reply("-CLUSTERDOWN The cluster is down\r\n")
        .expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0}))
        .reply("-NOREPLICAS Not enough good replicas to write. script: x, on @user_script:1.\r\n")
        .expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0}))
        .reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK_EQ(f.mock.sleeps, 2U);
    CHECK(f.mock.done());
}

TEST(release_retries_a_server_that_refused_the_connection) {
    Fixture f;
    f.acquired();
    f.conn.close();
    f.mock.on_connect(RESPLOCK_PORT_REFUSED);
    f.mock.on_connect().expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0})).reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.mock.done());
}

TEST(release_retries_within_the_first_half_of_the_timeout_and_keeps_the_token) {
    Fixture f("k", 100);
    f.acquired();
    f.mock.random_step = 0;  // pauses of backoff/2: 5, 10, 20, then the 15 ms left of 50
    for (int i = 0; i < 5; ++i) {
        f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0}))
            .reply("-LOADING Redis is loading the dataset in memory\r\n");
    }
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.release(), Status::loading);
    CHECK_EQ(f.mock.now_ms - start, 50U);
    CHECK(f.lock.token() == token0);  // not run: a later release may still remove the key
    CHECK(!f.lock.held());
    CHECK(f.mock.done());
}

TEST(release_retries_share_the_deadline_of_the_whole_release) {
    Fixture f("k", 100);
    f.acquired();
    f.mock.random_step = 0;
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0}))
        .reply("-BUSY Redis is busy running a script\r\n")
        .expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0}))
        .recv_timeout();
    const std::uint32_t start = f.mock.now_ms;
    // The second request may have run: no third; it waited for what was left of the 100 ms.
    CHECK_EQ(f.lock.release(), Status::unknown_outcome);
    CHECK_EQ(f.mock.now_ms - start, 100U);
    CHECK(f.lock.token() == token0);
    CHECK(f.mock.done());
}

TEST(release_sent_even_after_local_expiry) {
    Fixture f;
    f.acquired();
    f.mock.advance(5000);
    CHECK(!f.lock.held());
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0})).reply(":0\r\n");
    CHECK_EQ(f.lock.release(), Status::expired);
    CHECK(f.mock.done());
}

TEST(extend_resets_validity) {
    Fixture f;
    f.acquired();
    f.mock.advance(900);
    CHECK_EQ(f.lock.remaining_ms(), 88U);
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0, "2000"})).reply(":1\r\n");
    CHECK_EQ(f.lock.extend(2000), Status::ok);
    CHECK_EQ(f.lock.remaining_ms(), 2000U - 22U);
    CHECK(f.mock.done());
}

TEST(extend_after_local_expiry_is_refused_without_a_round_trip) {
    Fixture f;
    f.acquired();
    f.mock.advance(988);
    CHECK_EQ(f.lock.extend(1000), Status::expired);
    CHECK(f.lock.token() == token0);  // release may still clean up
    CHECK(f.mock.done());
}

TEST(extend_not_owner_and_expired_drop_the_lock) {
    Fixture f;
    f.acquired();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0, "1000"})).reply(":-1\r\n");
    CHECK_EQ(f.lock.extend(1000), Status::not_owner);
    CHECK(!f.lock.held());
    CHECK(f.lock.token().empty());
    Fixture g;
    g.acquired();
    g.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0, "1000"})).reply(":0\r\n");
    CHECK_EQ(g.lock.extend(1000), Status::expired);
    CHECK(!g.lock.held());
    CHECK(f.mock.done());
    CHECK(g.mock.done());
}

TEST(extend_reply_lost_keeps_old_validity) {
    Fixture f("k", 100);
    f.acquired();
    f.mock.advance(400);
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0, "1000"})).recv_timeout();
    CHECK_EQ(f.lock.extend(1000), Status::unknown_outcome);
    CHECK_EQ(f.lock.remaining_ms(), 1000U - 12U - 500U);
    CHECK(f.mock.done());
}

TEST(extend_waits_no_longer_than_the_validity_left) {
    Fixture f;
    f.acquired();
    f.mock.advance(900);  // 88 ms of validity left, less than the 2000 ms timeout
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0, "1000"})).recv_timeout();
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.extend(1000), Status::unknown_outcome);
    CHECK_EQ(f.mock.now_ms - start, 88U);
    CHECK(!f.lock.held());
    CHECK(f.mock.done());
}

TEST(extend_waits_no_longer_than_asked) {
    Fixture f;
    f.acquired();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0, "1000"})).recv_timeout();
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.extend(1000, 40), Status::unknown_outcome);
    CHECK_EQ(f.mock.now_ms - start, 40U);
    // Unconfirmed: the old validity stands (the new one would not end earlier).
    CHECK_EQ(f.lock.remaining_ms(), 988U - 40U);
    CHECK(f.mock.done());
}

// The port clock is 32 bits of milliseconds: 2^31 ms (24.8 days) after a lock lapsed, a signed
// difference would read it as valid again, for another 24.8 days.
TEST(a_lapsed_lock_stays_lapsed_when_the_clock_moves_on_by_2_31_ms) {
    for (const std::uint32_t later : {0x80000000U + 2000U, 0xFFFFFF00U}) {
        Fixture f;
        f.acquired();
        f.mock.advance(later);
        CHECK(!f.lock.held());
        CHECK_EQ(f.lock.remaining_ms(), 0U);
        // The object is free to take the lock again.
        f.mock.expect(wire::cmd({"SET", "k", token1, "NX", "PX", "1000"})).reply("+OK\r\n");
        CHECK_EQ(f.lock.acquire(1000), Status::ok);
        CHECK_EQ(f.lock.remaining_ms(), 988U);
        CHECK(f.mock.done());
    }
    // Seen lapsed once, it stays lapsed whatever the clock reads later (a full 2^32 turn).
    Fixture f;
    f.acquired();
    f.mock.advance(1000);
    CHECK(!f.lock.held());
    f.mock.advance(0xFFFFFFFFU - 1000U + 500U);  // the clock reads as 500 ms after the grant
    CHECK(!f.lock.held());
}

// Timeouts above 2^31 - 1 ms used to put the deadline in the past: every call failed at once.
TEST(a_timeout_of_2_31_ms_or_more_is_taken_as_the_longest_span) {
    for (const std::uint32_t timeout : {0x80000000U, 0xFFFFFFFFU}) {
        Fixture f("k", timeout);
        f.mock.on_connect()
            .expect(wire::cmd({"SET", "k", token0, "NX", "PX", "1000"}))
            .recv_delay(500)
            .reply("+OK\r\n");
        CHECK_EQ(f.lock.acquire(1000), Status::ok);
        CHECK(f.lock.held());
        CHECK(f.mock.done());
    }
}

TEST(adopted_token_releases_and_extends) {
    Fixture f;
    CHECK_EQ(f.lock.adopt("tok-from-elsewhere"), Status::ok);
    CHECK(!f.lock.held());  // validity unknown until an extend succeeds
    f.mock.on_connect()
        .expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", "tok-from-elsewhere", "500"}))
        .reply(":1\r\n")
        .expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", "tok-from-elsewhere"}))
        .reply(":1\r\n");
    CHECK_EQ(f.lock.extend(500), Status::ok);
    CHECK_EQ(f.lock.remaining_ms(), 500U - 7U);
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.mock.done());
}

TEST(query_free_mine_and_other) {
    Fixture f;
    f.acquired();
    const std::string_view q = wire::cmd({"EVALSHA", owner_sha, "1", "k"});
    f.mock.expect(q).reply("*2\r\n$-1\r\n:-2\r\n");
    f.mock.expect(q).reply("*2\r\n$32\r\n000102030405060708090a0b0c0d0e0f\r\n:950\r\n");
    f.mock.expect(q).reply("*2\r\n$5\r\nother\r\n:-1\r\n");
    f.mock.expect(q).reply("*2\r\n:1\r\n:5\r\n");
    LockInfo info;
    CHECK_EQ(f.lock.query(info), Status::ok);
    CHECK(info.state == LockState::free);
    CHECK_EQ(info.ttl_ms, -2);
    CHECK_EQ(f.lock.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_me);
    CHECK_EQ(info.ttl_ms, 950);
    CHECK_EQ(f.lock.query(info), Status::ok);
    CHECK(info.state == LockState::held_by_other);
    CHECK_EQ(info.ttl_ms, -1);
    CHECK_EQ(f.lock.query(info), Status::protocol_error);
    CHECK(f.mock.done());
}

TEST(try_acquire_with_no_wait_is_one_attempt) {
    Fixture f;
    f.mock.on_connect()
        .expect(wire::cmd({"SET", "k", token0, "NX", "PX", "1000"}))
        .reply("$-1\r\n");
    CHECK_EQ(f.lock.try_acquire(1000, 0), Status::busy);
    CHECK_EQ(f.mock.sleeps, 0U);
    CHECK(f.mock.done());
}

namespace {
const std::string_view set_zeros = wire::cmd({"SET", "k", zeros, "NX", "PX", "1000"});
// Between attempts try_acquire asks who holds the key and its PTTL (the query script).
const std::string_view query_k = wire::cmd({"EVALSHA", owner_sha, "1", "k"});

// A mock whose random source always gives 0: every token is `zeros`, jitter is backoff/2.
void constant_random(MockPort& mock) {
    mock.random_next = 0;
    mock.random_step = 0;
}
}  // namespace

TEST(try_acquire_never_sleeps_past_the_holders_ttl) {
    Fixture f;
    constant_random(f.mock);
    f.mock.on_connect()
        .expect(set_zeros)
        .reply("$-1\r\n")
        .expect(query_k)
        .reply("*2\r\n$5\r\nother\r\n:3\r\n")
        .expect(set_zeros)
        .reply("+OK\r\n");
    CHECK_EQ(f.lock.try_acquire(1000, 5000), Status::ok);
    CHECK_EQ(f.mock.sleeps, 1U);
    CHECK_EQ(f.mock.slept_ms, 3U);
    CHECK(f.lock.held());
    CHECK(f.mock.done());
}

TEST(try_acquire_retries_at_once_when_the_key_vanished) {
    Fixture f;
    constant_random(f.mock);
    f.mock.on_connect()
        .expect(set_zeros)
        .reply("$-1\r\n")
        .expect(query_k)
        .reply("*2\r\n$-1\r\n:-2\r\n")
        .expect(set_zeros)
        .reply("+OK\r\n");
    CHECK_EQ(f.lock.try_acquire(1000, 5000), Status::ok);
    CHECK_EQ(f.mock.slept_ms, 0U);
    CHECK(f.mock.done());
}

TEST(try_acquire_backs_off_and_stops_at_the_deadline) {
    Fixture f;
    constant_random(f.mock);
    f.mock.on_connect();
    // Pauses are backoff/2 with backoff 10, 20, 40, 80, 160, 250: 5+10+20+40+80 = 155 ms, then
    // 125 ms (280), then the 20 ms left; a last attempt at the deadline itself: 8 attempts.
    for (int i = 0; i < 7; ++i)
        f.mock.expect(set_zeros).reply("$-1\r\n").expect(query_k).reply(
            "*2\r\n$5\r\nother\r\n:-1\r\n");
    f.mock.expect(set_zeros).reply("$-1\r\n");
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.try_acquire(1000, 300), Status::busy);
    CHECK_EQ(f.mock.now_ms - start, 300U);
    CHECK_EQ(f.mock.sleeps, 7U);  // none after the last attempt
    CHECK(!f.lock.held());
    CHECK(f.mock.done());
}

// A pause that ends well after the deadline (a sleep or a blocking call that overran) ends the
// wait: another attempt would make it last longer than the wait plus one call.
TEST(try_acquire_makes_no_attempt_after_a_pause_that_overran_the_deadline) {
    MockPort mock;
    constant_random(mock);
    resplock_port_t port = mock.port();
    port.sleep_ms = [](void* ctx, std::uint32_t ms) {
        static_cast<MockPort*>(ctx)->advance(ms + 50);  // every sleep ends 50 ms late
    };
    char buf[512];
    const ConnectionConfig config;
    Connection conn(port, config, buf, sizeof buf);
    Lock lock(conn, "k");
    mock.on_connect();
    // Pauses of 5 and 10 ms end at 55 and 115 ms: the second wakes 15 ms past the deadline.
    for (int i = 0; i < 2; ++i)
        mock.expect(set_zeros).reply("$-1\r\n").expect(query_k).reply(
            "*2\r\n$5\r\nother\r\n:-1\r\n");
    const std::uint32_t start = mock.now_ms;
    CHECK_EQ(lock.try_acquire(1000, 100), Status::busy);
    CHECK_EQ(mock.now_ms - start, 115U);
    CHECK(mock.done());
}

TEST(try_acquire_retries_an_unreachable_server_within_the_wait) {
    Fixture f;
    constant_random(f.mock);
    f.mock.on_connect(RESPLOCK_PORT_REFUSED).on_connect().expect(set_zeros).reply("+OK\r\n");
    CHECK_EQ(f.lock.try_acquire(1000, 1000), Status::ok);
    CHECK_EQ(f.mock.slept_ms, 5U);
    CHECK(f.mock.done());
    Fixture g;
    constant_random(g.mock);
    g.mock.on_connect(RESPLOCK_PORT_REFUSED).on_connect(RESPLOCK_PORT_REFUSED);
    CHECK_EQ(g.lock.try_acquire(1000, 5), Status::connect_failed);
    CHECK(g.mock.done());
}

TEST(try_acquire_does_not_retry_an_unknown_outcome) {
    Fixture f("k", 50);
    constant_random(f.mock);
    f.mock.on_connect().expect(set_zeros).recv_closed();
    CHECK_EQ(f.lock.try_acquire(1000, 5000), Status::unknown_outcome);
    CHECK_EQ(f.mock.sleeps, 0U);
    CHECK(f.mock.done());
}

TEST(try_acquire_does_not_retry_permission_errors) {
    Fixture f;
    constant_random(f.mock);
    f.mock.on_connect().expect(set_zeros).reply("-NOPERM No permissions to access a key\r\n");
    CHECK_EQ(f.lock.try_acquire(1000, 5000), Status::no_permission);
    CHECK(f.mock.done());
}

TEST(guard_releases_at_scope_exit) {
    Fixture f;
    f.acquired();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0})).reply(":1\r\n");
    {
        LockGuard guard(f.lock);
        CHECK(f.lock.held());
    }
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

TEST(guard_without_a_lock_sends_nothing) {
    Fixture f;
    { LockGuard guard(f.lock); }
    CHECK_EQ(f.mock.connects, 0U);
}

TEST(lock_buffer_min_fits_the_longest_request_exactly) {
    CHECK_EQ(resplock::lock_buffer_min(), 443U);  // with the default limits
    char key[RESPLOCK_MAX_KEY_LEN];
    std::memset(key, 'k', sizeof key);
    const std::string_view k(key, sizeof key);
    // The longest token: a label of max_owner_len bytes, ':' and 40 hex digits.
    char longest[resplock::max_token_len];
    std::memset(longest, 'o', resplock::max_owner_len);
    longest[resplock::max_owner_len] = ':';
    std::memcpy(longest + resplock::max_owner_len + 1, "0123456789012345678901234567890123456789",
                40);
    const std::string_view token(longest, sizeof longest);
    for (std::size_t size : {resplock::lock_buffer_min(), resplock::lock_buffer_min() - 1}) {
        MockPort mock;
        const resplock_port_t port = mock.port();
        char buf[500];
        Connection conn(port, {}, buf, size);
        Lock lock(conn, k);
        REQUIRE_EQ(lock.adopt(token), Status::ok);
        mock.on_connect()
            .expect(wire::cmd({"EVALSHA", owner_sha, "1", k, token, "2147483647"}))
            .reply("-NOSCRIPT No matching script.\r\n");
        if (size == resplock::lock_buffer_min()) {
            mock.expect(wire::cmd({"EVAL", owner_text, "1", k, token, "2147483647"}))
                .reply(":1\r\n");
            CHECK_EQ(lock.extend(resplock::max_ttl_ms), Status::ok);
        } else {
            CHECK_EQ(lock.extend(resplock::max_ttl_ms), Status::too_large);
        }
        CHECK(mock.done());
    }
}
