// ReentrantLock over the mock port: the paths a real server does not show on demand (lost and
// malformed replies at each step), the exact requests sent, and waiting bounded by the PTTL that
// comes with the busy reply.
#include "check.hpp"
#include "mock_connection.hpp"
#include "resplock/ports/mock.hpp"
#include "resplock/variants/reentrant_lock.hpp"
#include "wire.hpp"

using resplock::ReentrantLock;
using resplock::Status;

namespace {

constexpr std::string_view acquire_sha = "d3bb8a7134ecd71f7dc54ad79459da5cef967ed3";
constexpr std::string_view release_sha = "344e084f8992ca5ac8c0f4939276a8f416fe8cdf";
constexpr std::string_view extend_sha = "1c4ae5faf4ddbf4062190d5a5fe147af14bfa90e";
using wire::token0;

struct Fixture : support::MockConnection<> {
    ReentrantLock lock;

    explicit Fixture(std::string_view owner = "o")
        : MockConnection(support::with_timeout(100)), lock(conn, "k", owner) {}
    std::string_view acquire_cmd(std::string_view ttl) {
        return wire::cmd({"EVALSHA", acquire_sha, "1", "k", lock.owner(), ttl});
    }
    std::string_view release_cmd() {
        return wire::cmd({"EVALSHA", release_sha, "1", "k", lock.owner()});
    }
    // Scripts a confirmed acquire that the server counts as `count`, with TTL 1000.
    void acquired(const char* count_reply) {
        mock.expect(acquire_cmd("1000")).reply(count_reply);
        CHECK_EQ(lock.acquire(1000), Status::ok);
    }
};

}  // namespace

TEST(first_acquire_reply_lost_keeps_owner_for_release_but_claims_nothing) {
    Fixture f;
    f.mock.on_connect().expect(f.acquire_cmd("1000")).recv_timeout();
    CHECK_EQ(f.lock.acquire(1000), Status::unknown_outcome);
    CHECK(!f.lock.held());
    CHECK_EQ(f.lock.remaining_ms(), 0U);
    CHECK(f.lock.token() == "o");
    // The count may have been added: release() undoes it.
    f.mock.on_connect().expect(f.release_cmd()).reply(":0\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

TEST(reentry_reply_lost_keeps_the_confirmed_validity) {
    Fixture f;
    f.mock.on_connect();
    f.acquired("*2\r\n:1\r\n:1000\r\n");
    f.mock.advance(100);
    const std::uint32_t before = f.lock.remaining_ms();
    CHECK(before > 0U);
    f.mock.expect(f.acquire_cmd("1000")).recv_closed();
    CHECK_EQ(f.lock.acquire(1000), Status::unknown_outcome);
    CHECK_EQ(f.lock.remaining_ms(), before);
    CHECK_EQ(f.lock.count(), 1U);
    // Only the confirmed level is this object's to release.
    f.mock.on_connect().expect(f.release_cmd()).reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK(!f.lock.held());
    CHECK(f.mock.done());
}

TEST(release_reply_lost_counts_the_level_and_ends_validity) {
    Fixture f;
    f.mock.on_connect();
    f.acquired("*2\r\n:1\r\n:1000\r\n");
    f.acquired("*2\r\n:2\r\n:1000\r\n");
    f.mock.expect(f.release_cmd()).recv_timeout();
    CHECK_EQ(f.lock.release(), Status::unknown_outcome);
    CHECK_EQ(f.lock.remaining_ms(), 0U);
    CHECK(f.lock.token() == "o");  // one level left
    // extend() re-establishes validity with the TTL the server applied.
    f.mock.on_connect()
        .expect(wire::cmd({"EVALSHA", extend_sha, "1", "k", "o", "500"}))
        .reply(":1000\r\n");
    CHECK_EQ(f.lock.extend(500), Status::ok);
    CHECK_EQ(f.lock.remaining_ms(), 1000U - 12U);
    f.mock.expect(f.release_cmd()).recv_timeout();
    CHECK_EQ(f.lock.release(), Status::unknown_outcome);
    CHECK(f.lock.token().empty());  // no level left: never released twice
    CHECK_EQ(f.lock.release(), Status::invalid_argument);
    CHECK(f.mock.done());
}

TEST(a_release_refused_before_it_ran_is_retried_and_counts_one_level) {
    Fixture f;
    f.mock.on_connect();
    f.acquired("*2\r\n:1\r\n:1000\r\n");
    f.acquired("*2\r\n:2\r\n:1000\r\n");
    f.mock.expect(f.release_cmd())
        .reply("-TRYAGAIN Multiple keys request during rehashing of slot\r\n")
        .expect(f.release_cmd())
        .reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK_EQ(f.lock.count(), 1U);  // one level released, not two
    CHECK(f.lock.held());
    CHECK_EQ(f.mock.sleeps, 1U);
    CHECK(f.mock.done());
}

TEST(extend_reply_lost_keeps_the_old_validity) {
    Fixture f;
    f.mock.on_connect();
    f.acquired("*2\r\n:1\r\n:1000\r\n");
    f.mock.expect(wire::cmd({"EVALSHA", extend_sha, "1", "k", "o", "2000"})).recv_timeout();
    const std::uint32_t before = f.lock.remaining_ms();
    CHECK_EQ(f.lock.extend(2000), Status::unknown_outcome);
    CHECK(f.lock.remaining_ms() > 0U && f.lock.remaining_ms() <= before);
    CHECK(f.lock.token() == "o");
    CHECK(f.mock.done());
}

TEST(malformed_acquire_reply_is_protocol_error_never_held) {
    Fixture f;
    f.mock.on_connect().expect(f.acquire_cmd("1000")).reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::protocol_error);
    CHECK(!f.lock.held());
    CHECK(f.lock.token() == "o");
    f.mock.expect(f.acquire_cmd("1000")).reply("*2\r\n:0\r\n:1000\r\n");  // count 0: impossible
    CHECK_EQ(f.lock.acquire(1000), Status::protocol_error);
    CHECK(!f.lock.held());
    f.mock.expect(f.acquire_cmd("1000")).reply("*2\r\n:1\r\n:0\r\n");  // TTL 0: impossible
    CHECK_EQ(f.lock.acquire(1000), Status::protocol_error);
    CHECK(!f.lock.held());
    CHECK(f.mock.done());
}

TEST(levels_never_exceed_the_servers_count) {
    Fixture f;
    f.mock.on_connect();
    f.acquired("*2\r\n:1\r\n:1000\r\n");
    f.acquired("*2\r\n:2\r\n:1000\r\n");
    // The key expired and was made anew by this re-entry: one level is left, not three.
    f.acquired("*2\r\n:1\r\n:1000\r\n");
    f.mock.expect(f.release_cmd()).reply(":0\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

TEST(busy_reply_bounds_the_wait_with_no_extra_request) {
    Fixture f;
    // Busy with 2 ms left on the holder's key, then free: the pause is at most 2 ms (below the
    // shortest backoff) and no PTTL command is sent (the mock rejects any request not scripted).
    f.mock.on_connect().expect(f.acquire_cmd("1000")).reply(":2\r\n");
    f.mock.expect(f.acquire_cmd("1000")).reply("*2\r\n:1\r\n:1000\r\n");
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.try_acquire(1000, 5000), Status::ok);
    CHECK(f.mock.now_ms - start <= 2U);
    CHECK(f.lock.held());
    CHECK(f.mock.done());
}

TEST(busy_after_a_hold_means_it_was_lost) {
    Fixture f;
    f.mock.on_connect();
    f.acquired("*2\r\n:1\r\n:1000\r\n");
    f.mock.expect(f.acquire_cmd("1000")).reply(":900\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::busy);
    CHECK(!f.lock.held());
    CHECK(f.lock.token().empty());
    CHECK_EQ(f.lock.count(), 0U);
    CHECK(f.mock.done());
}

TEST(random_owner_is_made_once) {
    Fixture f("");
    CHECK(f.lock.owner().empty());
    f.mock.on_connect()
        .expect(wire::cmd({"EVALSHA", acquire_sha, "1", "k", token0, "1000"}))
        .reply("*2\r\n:1\r\n:1000\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK(f.lock.owner() == token0);
    f.mock.expect(wire::cmd({"EVALSHA", acquire_sha, "1", "k", token0, "1000"}))
        .reply("*2\r\n:2\r\n:1000\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::ok);
    CHECK_EQ(f.lock.count(), 2U);
    CHECK(f.mock.done());
}

// 2^31 ms (24.8 days) after the hold lapsed, a signed clock difference would read it as valid
// again; it must stay lapsed, and extend() must say so without a request.
TEST(a_lapsed_hold_stays_lapsed_when_the_clock_moves_on_by_2_31_ms) {
    Fixture f;
    f.mock.on_connect();
    f.acquired("*2\r\n:1\r\n:1000\r\n");
    f.mock.advance(0x80000000U + 2000U);
    CHECK(!f.lock.held());
    CHECK_EQ(f.lock.remaining_ms(), 0U);
    CHECK_EQ(f.lock.extend(1000), Status::expired);
    CHECK(f.mock.done());
}

// set_replicas(): a grant, first or re-entry, and an extend pass the write check (WAIT; a
// router's confirmation). A first acquisition that fails it is given back and, within a wait,
// asked for again over a new connection; a re-entry that fails it gives its count back and leaves
// the earlier level with the validity it had; an extend that fails it keeps no more validity.
TEST(replicas_check_every_grant_and_extend) {
    Fixture f;
    CHECK_EQ(f.lock.set_replicas(256), Status::invalid_argument);
    CHECK_EQ(f.lock.set_replicas(1), Status::ok);
    f.mock.on_connect()
        .expect(f.acquire_cmd("1000"))
        .reply("*2\r\n:1\r\n:1000\r\n")
        .expect(wire::cmd({"WAIT", "1", "50"}))
        .reply(":0\r\n")
        .expect(f.release_cmd())
        .reply(":0\r\n")
        .on_connect()
        .expect(f.acquire_cmd("1000"))
        .reply("*2\r\n:1\r\n:1000\r\n")
        .expect(wire::cmd({"WAIT", "1", "50"}))
        .reply(":1\r\n");
    CHECK_EQ(f.lock.try_acquire(1000, 500), Status::ok);
    CHECK(f.lock.held());
    CHECK_EQ(f.lock.replicas_acknowledged(), 1U);
    CHECK(f.mock.done());

    // A re-entry not acknowledged: its count is given back, the first level keeps its validity.
    f.mock.advance(100);
    const std::uint32_t before = f.lock.remaining_ms();
    f.mock.expect(f.acquire_cmd("1000"))
        .reply("*2\r\n:2\r\n:1000\r\n")
        .expect(wire::cmd({"WAIT", "1", "50"}))
        .reply(":0\r\n")
        .expect(f.release_cmd())
        .reply(":1\r\n");
    CHECK_EQ(f.lock.acquire(1000), Status::not_replicated);
    CHECK_EQ(f.lock.remaining_ms(), before);
    CHECK_EQ(f.lock.count(), 1U);
    CHECK(f.lock.token() == "o");
    CHECK(f.mock.done());

    // An extend not acknowledged keeps no more validity than it had.
    f.mock.on_connect()
        .expect(wire::cmd({"EVALSHA", extend_sha, "1", "k", "o", "5000"}))
        .reply(":5000\r\n")
        .expect(wire::cmd({"WAIT", "1", "50"}))
        .reply(":0\r\n");
    CHECK_EQ(f.lock.extend(5000), Status::not_replicated);
    CHECK(f.lock.remaining_ms() <= before);
    CHECK(f.lock.held());
    CHECK(f.mock.done());
}
