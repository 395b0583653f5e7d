// Semaphore (src/variants/semaphore.cpp) over the mock port: the exact script requests for limits
// 1 and N, every reply shape of the script (a grant with its fencing number, busy with the time
// until the earliest lease ends, malformed answers, a lost reply keeping the token), the plain
// mode's wake block and the fair mode's hand-off through the waiter's own list, waits bounded by
// the busy time, leaving the queue, and the answers of release, extend and query.
#include <cstdint>
#include <cstring>
#include <string>

#include "check.hpp"
#include "mock_connection.hpp"
#include "resplock/ports/mock.hpp"
#include "resplock/variants/lock_ref.hpp"
#include "resplock/variants/semaphore.hpp"
#include "wire.hpp"

using resplock::Semaphore;
using resplock::SemaphoreInfo;
using resplock::Status;

namespace {

using wire::token0;

constexpr std::string_view sha = "1615af72c5860cf0ad6da7e930616991ff7ca40a";

// One run of the script for key "k" and token0.
std::string_view script(std::string_view op, std::string_view ttl, std::string_view limit,
                        std::string_view entry = "0", std::string_view token = token0) {
    return wire::cmd({"EVALSHA", sha, "5", "k", "{k}:fence", "{k}:wake", "{k}:q", "{k}:w", op,
                      token, ttl, limit, entry, "{k}:f:"});
}

constexpr std::uint64_t fence_value = 1795778052223229ULL;
const std::string_view granted_10s = "*2\r\n$16\r\n1795778052223229\r\n:10000\r\n";
constexpr std::string_view busy_5s = ":5000\r\n";
constexpr std::string_view own_list = "{k}:f:000102030405060708090a0b0c0d0e0f";

std::string_view blpop(std::string_view list, std::string_view seconds) {
    return wire::cmd({"BLPOP", list, seconds});
}

struct Fixture : support::MockConnection<4096> {
    Semaphore sem;

    explicit Fixture(std::uint32_t limit = 3, bool fair = false, std::string_view key = "k")
        : MockConnection(support::with_timeout(2000), 4096), sem(conn, key, limit, fair) {}
};

// The drift allowance of a 10000 ms TTL: 10000 / 100 + 2.
constexpr std::uint32_t drift = 102;

TEST(a_grant_sends_the_exact_request_and_returns_the_fencing_number) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply(granted_10s)
        .expect(script("r", "0", "3"))
        .reply(":1\r\n");
    std::uint64_t fence = 0;
    CHECK_EQ(f.sem.acquire(10000, &fence), Status::ok);
    CHECK_EQ(fence, fence_value);
    CHECK_EQ(f.sem.remaining_ms(), 10000U - drift);
    CHECK(f.sem.held());
    CHECK(f.sem.token() == token0);
    CHECK_EQ(f.sem.release(), Status::ok);
    CHECK(f.sem.token().empty());
    CHECK_EQ(f.sem.remaining_ms(), 0U);
    CHECK(f.mock.done());
}

TEST(the_limit_is_sent_as_the_caller_states_it_one_and_the_largest) {
    for (const std::uint32_t limit : {std::uint32_t{1}, Semaphore::max_limit}) {
        Fixture f(limit);
        CHECK_EQ(f.sem.limit(), limit);
        f.mock.on_connect()
            .expect(script("t", "10000", limit == 1 ? "1" : "65535"))
            .reply(granted_10s);
        CHECK_EQ(f.sem.acquire(10000), Status::ok);  // no fence asked for: still granted
        CHECK(f.mock.done());
    }
}

TEST(a_limit_out_of_range_and_bad_keys_refuse_every_call_unsent) {
    static char longest[RESPLOCK_MAX_KEY_LEN + 1];
    std::memset(longest, 'k', sizeof longest);
    struct Case {
        std::string_view key;
        std::uint32_t limit;
    };
    for (const Case c : {Case{"k", 0}, Case{"k", Semaphore::max_limit + 1}, Case{"", 3},
                         Case{{longest, sizeof longest}, 3}}) {
        Fixture f(c.limit, false, c.key);
        CHECK(f.sem.key().empty());
        CHECK_EQ(f.sem.limit(), 0U);
        std::uint64_t fence = 0;
        CHECK_EQ(f.sem.acquire(1000, &fence), Status::invalid_argument);
        CHECK_EQ(f.sem.try_acquire(1000, 100), Status::invalid_argument);
        CHECK_EQ(f.sem.adopt(token0), Status::invalid_argument);
        CHECK_EQ(f.sem.release(), Status::invalid_argument);
        CHECK_EQ(f.sem.extend(1000), Status::invalid_argument);
        SemaphoreInfo info;
        CHECK_EQ(f.sem.query(info), Status::invalid_argument);
        CHECK_EQ(f.mock.connects, 0U);
    }
}

TEST(a_busy_attempt_drops_its_token) {
    Fixture f(1);
    f.mock.on_connect().expect(script("t", "10000", "1")).reply(busy_5s);
    std::uint64_t fence = 7;
    CHECK_EQ(f.sem.acquire(10000, &fence), Status::busy);
    CHECK_EQ(fence, 7U);  // untouched
    CHECK(f.sem.token().empty());
    CHECK(f.mock.done());
}

TEST(malformed_answers_are_protocol_errors_that_keep_the_token_without_validity) {
    const std::string_view answers[] = {
        "*2\r\n$4\r\n0123\r\n:10000\r\n",  // a leading zero: no fencing number
        "*2\r\n$0\r\n\r\n:10000\r\n",      // no number: a hand-off whose item was taken
        "*2\r\n$20\r\n12345678901234567890\r\n:10000\r\n",  // past INT64_MAX
        "*2\r\n$16\r\n1795778052223229\r\n:0\r\n",          // a lease with no time left
        "*2\r\n$16\r\n1795778052223229\r\n:10001\r\n",      // more than the TTL asked
        "*2\r\n$19\r\n9223372036854775808\r\n:10000\r\n",   // INT64_MAX + 1
        "*2\r\n:1795778052223229\r\n:10000\r\n",            // the number as an integer
        "*3\r\n$1\r\n1\r\n:1\r\n:1\r\n",                    // three elements
        ":-2\r\n",                                          // busy below -1
        "+OK\r\n",
    };
    for (const std::string_view answer : answers) {
        Fixture f;
        f.mock.on_connect().expect(script("t", "10000", "3")).reply(answer);
        std::uint64_t fence = 7;
        CHECK_EQ(f.sem.acquire(10000, &fence), Status::protocol_error);
        CHECK_EQ(fence, 7U);
        CHECK(f.sem.token() == token0);
        CHECK_EQ(f.sem.remaining_ms(), 0U);
        CHECK(f.mock.done());
    }
}

TEST(the_largest_fencing_number_is_read_exactly) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply("*2\r\n$19\r\n9223372036854775807\r\n:10000\r\n");
    std::uint64_t fence = 0;
    CHECK_EQ(f.sem.acquire(10000, &fence), Status::ok);
    CHECK_EQ(fence, 9223372036854775807ULL);
    CHECK(f.mock.done());
}

TEST(a_lost_reply_is_an_unknown_outcome_that_keeps_the_token_for_release) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .recv_timeout()
        .on_connect()
        .expect(script("r", "0", "3"))
        .reply(":1\r\n");
    CHECK_EQ(f.sem.acquire(10000), Status::unknown_outcome);
    CHECK(f.sem.token() == token0);
    CHECK(!f.sem.held());
    // The script may have granted the lease: release() removes it.
    CHECK_EQ(f.sem.release(), Status::ok);
    CHECK(f.sem.token().empty());
    CHECK(f.mock.done());
}

TEST(an_error_from_the_script_keeps_the_token_an_unrun_one_does_not) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply("-ERR Error running script: @user_script:1: ERR value is not an integer\r\n");
    CHECK_EQ(f.sem.acquire(10000), Status::server_error);
    CHECK(f.sem.token() == token0);
    CHECK(!f.sem.held());

    Fixture g;
    g.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply("-LOADING Redis is loading the dataset in memory\r\n");
    CHECK_EQ(g.sem.acquire(10000), Status::loading);
    CHECK(g.sem.token().empty());
    CHECK(g.mock.done());
}

// The plain mode: a busy answer carrying 5 s blocks on BASE:wake for the backoff (5 ms: the
// mock's jitter byte 16 of 10 ms); the release's item wakes it for the next attempt.
TEST(a_plain_waiter_blocks_on_the_wake_list_and_attempts_again_when_woken) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply(busy_5s)
        .expect(blpop("{k}:wake", "0.005"))
        .reply("*2\r\n$8\r\n{k}:wake\r\n$1\r\n1\r\n")
        .expect(script("t", "10000", "3"))
        .reply(granted_10s);
    std::uint64_t fence = 0;
    CHECK_EQ(f.sem.try_acquire(10000, 8000, &fence), Status::ok);
    CHECK_EQ(fence, fence_value);
    CHECK_EQ(f.mock.sleeps, 0U);
    CHECK(f.mock.done());
}

// The busy answer's time bounds the pause: a lease ending in 3 ms is waited for 3 ms (slept:
// too short a span for a BLPOP and Redis's tick), not the 5 ms backoff.
TEST(the_pause_is_bounded_by_the_earliest_lease_end) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply(":3\r\n")
        .expect(script("t", "10000", "3"))
        .reply(granted_10s);
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.sem.try_acquire(10000, 8000), Status::ok);
    CHECK_EQ(f.mock.sleeps, 1U);
    CHECK_EQ(f.mock.slept_ms, 3U);
    CHECK_EQ(f.mock.now_ms - start, 3U);
    CHECK(f.mock.done());
}

TEST(a_busy_answer_without_a_live_lease_falls_back_to_the_backoff) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply(":-1\r\n")
        .expect(blpop("{k}:wake", "0.005"))
        .recv_delay(5)
        .reply("*-1\r\n")
        .expect(script("t", "10000", "3"))
        .reply(granted_10s);
    CHECK_EQ(f.sem.try_acquire(10000, 8000), Status::ok);
    CHECK(f.mock.done());
}

TEST(a_plain_wait_that_runs_out_is_busy_and_sends_no_leave) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply(":50\r\n")
        .expect(script("t", "10000", "3"))
        .reply(":45\r\n")
        .expect(script("t", "10000", "3"))
        .reply(":40\r\n");
    // Pauses of 5 and then 5 ms (slept: 50 ms left is less than a block and Redis's tick).
    CHECK_EQ(f.sem.try_acquire(10000, 10), Status::busy);
    CHECK(f.sem.token().empty());
    CHECK_EQ(f.mock.slept_ms, 10U);
    CHECK(f.mock.done());
}

// The fair mode: the first attempt joins the queue ('a', its entry living 2 x 1000 + 100 ms),
// the waiter blocks on its own list, and the hand-off's item is its lease's fencing number.
// Validity counts from the attempt answered busy, not from the BLPOP.
TEST(a_fair_waiter_is_handed_a_lease_with_its_fencing_number) {
    Fixture f(2, true);
    f.mock.on_connect()
        .expect(script("a", "10000", "2", "2100"))
        .recv_delay(300)
        .reply(busy_5s)
        .expect(blpop(own_list, "1.000"))
        .recv_delay(400)
        .reply(
            "*2\r\n$38\r\n{k}:f:000102030405060708090a0b0c0d0e0f\r\n$16\r\n1795778052223229\r\n");
    std::uint64_t fence = 0;
    CHECK_EQ(f.sem.try_acquire(10000, 8000, &fence), Status::ok);
    CHECK_EQ(fence, fence_value);
    CHECK_EQ(f.sem.remaining_ms(), 10000U - drift - 700U);
    CHECK(f.mock.done());
}

// set_replicas(): the WAIT after a grant, a hand-off and an extend; unmet, the grant is given
// back and the extend claims no new validity.
TEST(replicas_met_after_a_grant_and_an_extend) {
    Fixture f;
    CHECK_EQ(f.sem.set_replicas(256), Status::invalid_argument);
    CHECK_EQ(f.sem.set_replicas(2), Status::ok);
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply(granted_10s)
        .expect(wire::cmd({"WAIT", "2", "1000"}))
        .reply(":2\r\n")
        .expect(script("e", "10000", "3"))
        .reply(":1\r\n")
        .expect(wire::cmd({"WAIT", "2", "1000"}))
        .reply(":3\r\n");
    CHECK_EQ(f.sem.acquire(10000), Status::ok);
    CHECK_EQ(f.sem.replicas_acknowledged(), 2U);
    CHECK_EQ(f.sem.extend(10000), Status::ok);
    CHECK_EQ(f.sem.replicas_acknowledged(), 3U);
    CHECK_EQ(f.sem.remaining_ms(), 10000U - drift);
    CHECK(f.mock.done());
}

TEST(replicas_unmet_give_the_grant_back_and_keep_the_old_validity_on_extend) {
    Fixture f;
    CHECK_EQ(f.sem.set_replicas(2), Status::ok);
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply(granted_10s)
        .expect(wire::cmd({"WAIT", "2", "1000"}))
        .reply(":1\r\n")
        .expect(script("r", "0", "3"))
        .reply(":1\r\n");
    CHECK_EQ(f.sem.acquire(10000), Status::not_replicated);
    CHECK(!f.sem.held());
    CHECK(f.sem.token().empty());
    CHECK(f.mock.done());

    Fixture g;
    CHECK_EQ(g.sem.set_replicas(1), Status::ok);
    g.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply(granted_10s)
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":1\r\n")
        .expect(script("e", "60000", "3"))
        .reply(":1\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":0\r\n");
    CHECK_EQ(g.sem.acquire(10000), Status::ok);
    g.mock.advance(1000);
    CHECK_EQ(g.sem.extend(60000), Status::not_replicated);
    // No more than the lease had before the extend.
    CHECK_EQ(g.sem.remaining_ms(), 10000U - drift - 1000U);
    CHECK(g.sem.token() == token0);
    CHECK(g.mock.done());
}

TEST(replicas_unmet_after_a_grant_keep_the_token_when_the_release_fails) {
    Fixture f(3, false);
    CHECK_EQ(f.sem.set_replicas(1), Status::ok);
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply(granted_10s)
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":0\r\n")
        .expect(script("r", "0", "3"))
        .reply("-ERR boom\r\n");
    CHECK_EQ(f.sem.try_acquire(10000, 0), Status::not_replicated);
    CHECK(!f.sem.held());
    CHECK(f.sem.token() == token0);  // release() can be tried again
    CHECK(f.mock.done());
}

// not_replicated is retried within the wait (a failover may bring a master whose replicas
// answer), over a new connection and with the same token.
TEST(a_grant_given_back_is_asked_for_again_with_the_same_token) {
    Fixture f;
    CHECK_EQ(f.sem.set_replicas(1), Status::ok);
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply(granted_10s)
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":0\r\n")
        .expect(script("r", "0", "3"))
        .reply(":1\r\n")
        .on_connect()
        .expect(script("t", "10000", "3"))
        .reply(granted_10s)
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":1\r\n");
    CHECK_EQ(f.sem.try_acquire(10000, 5000), Status::ok);
    CHECK(f.sem.held());
    CHECK(f.sem.token() == token0);
    CHECK(f.mock.done());
}

TEST(replicas_after_a_fair_hand_off) {
    Fixture f(2, true);
    CHECK_EQ(f.sem.set_replicas(1), Status::ok);
    f.mock.on_connect()
        .expect(script("a", "10000", "2", "2100"))
        .reply(busy_5s)
        .expect(blpop(own_list, "1.000"))
        .reply(
            "*2\r\n$38\r\n{k}:f:000102030405060708090a0b0c0d0e0f\r\n$16\r\n"
            "1795778052223229\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":1\r\n");
    CHECK_EQ(f.sem.try_acquire(10000, 8000), Status::ok);
    CHECK(f.sem.held());
    CHECK(f.mock.done());
}

// A hand-off whose write check fails is given back, and the wait goes on like after any grant
// given back: a new connection (through a router, to the current master), the same token, the
// queue joined anew, until a grant passes the check or the wait runs out.
TEST(a_fair_hand_off_given_back_is_asked_for_again_within_the_wait) {
    Fixture f(2, true);
    CHECK_EQ(f.sem.set_replicas(1), Status::ok);
    f.mock.on_connect()
        .expect(script("a", "10000", "2", "2100"))
        .reply(busy_5s)
        .expect(blpop(own_list, "1.000"))
        .reply(
            "*2\r\n$38\r\n{k}:f:000102030405060708090a0b0c0d0e0f\r\n$16\r\n"
            "1795778052223229\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":0\r\n")
        .expect(script("r", "0", "2"))
        .reply(":1\r\n")
        .on_connect()
        .expect(script("a", "10000", "2", "2100"))
        .reply(granted_10s)
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":1\r\n");
    std::uint64_t fence = 0;
    CHECK_EQ(f.sem.try_acquire(10000, 8000, &fence), Status::ok);
    CHECK(f.sem.held());
    CHECK(f.sem.token() == token0);
    CHECK_EQ(fence, fence_value);
    CHECK(f.mock.done());

    // When the wait has no time left for another attempt, the failed check is the answer.
    Fixture g(2, true);
    CHECK_EQ(g.sem.set_replicas(1), Status::ok);
    g.mock.on_connect()
        .expect(script("a", "10000", "2", "2100"))
        .reply(busy_5s)
        .expect(blpop(own_list, "1.000"))
        .recv_delay(1150)
        .reply(
            "*2\r\n$38\r\n{k}:f:000102030405060708090a0b0c0d0e0f\r\n$16\r\n"
            "1795778052223229\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .recv_delay(100)
        .reply(":0\r\n")
        .expect(script("r", "0", "2"))
        .reply(":1\r\n");
    CHECK_EQ(g.sem.try_acquire(10000, 1200), Status::not_replicated);
    CHECK(!g.sem.held());
    CHECK(g.mock.done());
}

TEST(a_fair_waiter_whose_refresh_finds_the_lease_takes_its_remaining_time) {
    Fixture f(2, true);
    f.mock.on_connect()
        .expect(script("a", "10000", "2", "2100"))
        .reply(busy_5s)
        .expect(blpop(own_list, "1.000"))
        .recv_delay(1000)
        .reply("*-1\r\n")
        .expect(script("a", "10000", "2", "2100"))
        .reply("*2\r\n$16\r\n1795778052223229\r\n:4000\r\n");
    std::uint64_t fence = 0;
    CHECK_EQ(f.sem.try_acquire(10000, 8000, &fence), Status::ok);
    CHECK_EQ(fence, fence_value);
    CHECK_EQ(f.sem.remaining_ms(), 4000U - 42U);
    CHECK(f.mock.done());
}

TEST(a_fair_wake_item_that_is_no_number_is_answered_by_the_next_attempt) {
    Fixture f(2, true);
    f.mock.on_connect()
        .expect(script("a", "10000", "2", "2100"))
        .reply(busy_5s)
        .expect(blpop(own_list, "1.000"))
        .reply("*2\r\n$38\r\n{k}:f:000102030405060708090a0b0c0d0e0f\r\n$1\r\nx\r\n")
        .expect(script("a", "10000", "2", "2100"))
        .reply("*2\r\n$0\r\n\r\n:9000\r\n");
    CHECK_EQ(f.sem.try_acquire(10000, 8000), Status::protocol_error);
    CHECK(f.sem.token() == token0);
    CHECK(!f.sem.held());
    CHECK(f.mock.done());
}

TEST(a_fair_wait_that_runs_out_leaves_the_queue) {
    Fixture f(2, true);
    f.mock.on_connect()
        .expect(script("a", "10000", "2", "2100"))
        .reply(busy_5s)
        .expect(blpop(own_list, "0.200"))  // 300 ms left, minus Redis's tick
        .recv_delay(200)
        .reply("*-1\r\n")
        .expect(script("a", "10000", "2", "2100"))
        .reply(busy_5s)  // 100 ms left: slept, not blocked
        .expect(script("a", "10000", "2", "2100"))
        .reply(busy_5s)
        .expect(script("l", "10000", "2", "2100"))
        .reply(":4500\r\n");
    CHECK_EQ(f.sem.try_acquire(10000, 300), Status::busy);
    CHECK(f.sem.token().empty());
    CHECK(f.mock.done());
}

TEST(leaving_takes_a_lease_handed_over_meanwhile) {
    Fixture f(2, true);
    f.mock.on_connect()
        .expect(script("a", "10000", "2", "2100"))
        .reply(busy_5s)
        .expect(blpop(own_list, "0.100"))
        .recv_delay(100)
        .reply("*-1\r\n")
        .expect(script("a", "10000", "2", "2100"))
        .reply(busy_5s)  // 100 ms left: slept, not blocked
        .expect(script("a", "10000", "2", "2100"))
        .reply(busy_5s)
        .expect(script("l", "10000", "2", "2100"))
        .reply("*2\r\n$16\r\n1795778052223229\r\n:9000\r\n");
    std::uint64_t fence = 0;
    CHECK_EQ(f.sem.try_acquire(10000, 200, &fence), Status::ok);
    CHECK_EQ(fence, fence_value);
    CHECK_EQ(f.sem.remaining_ms(), 9000U - 92U);
    CHECK(f.mock.done());
}

TEST(a_fair_one_shot_attempt_does_not_queue) {
    Fixture f(2, true);
    f.mock.on_connect().expect(script("t", "10000", "2")).reply(busy_5s);
    CHECK_EQ(f.sem.acquire(10000), Status::busy);
    CHECK(f.sem.token().empty());
    CHECK(f.mock.done());
}

TEST(release_answers) {
    struct Case {
        std::string_view reply;
        Status status;
        bool keeps_token;
    };
    for (const Case c : {Case{":0\r\n", Status::expired, false},
                         Case{"-WRONGTYPE Operation against a key holding the wrong kind of "
                              "value\r\n",
                              Status::wrong_type, true},
                         Case{":2\r\n", Status::protocol_error, true},
                         Case{"$1\r\n1\r\n", Status::protocol_error, true}}) {
        Fixture f;
        f.mock.on_connect().expect(script("r", "0", "3")).reply(c.reply);
        CHECK_EQ(f.sem.adopt(token0), Status::ok);
        CHECK_EQ(f.sem.release(), c.status);
        CHECK_EQ(!f.sem.token().empty(), c.keeps_token);
        CHECK_EQ(f.sem.remaining_ms(), 0U);
        CHECK(f.mock.done());
    }
    Fixture f;
    f.mock.on_connect().expect(script("r", "0", "3")).recv_timeout();
    CHECK_EQ(f.sem.adopt(token0), Status::ok);
    CHECK_EQ(f.sem.release(), Status::unknown_outcome);
    CHECK(f.sem.token() == token0);
    CHECK(f.mock.done());
    Fixture none;
    CHECK_EQ(none.sem.release(), Status::invalid_argument);
}

TEST(a_release_refused_before_it_ran_is_retried) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("r", "0", "3"))
        .reply("-LOADING Redis is loading the dataset in memory\r\n")
        .expect(script("r", "0", "3"))
        .reply("-NOREPLICAS Not enough good replicas to write.\r\n")
        .expect(script("r", "0", "3"))
        .reply(":1\r\n");
    CHECK_EQ(f.sem.adopt(token0), Status::ok);
    CHECK_EQ(f.sem.release(), Status::ok);
    CHECK(f.sem.token().empty());
    CHECK_EQ(f.mock.sleeps, 2U);
    CHECK(f.mock.done());
}

TEST(extend_moves_a_live_lease_and_restarts_validity) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply(granted_10s)
        .expect(script("e", "20000", "3"))
        .recv_delay(10)
        .reply(":1\r\n")
        .expect(script("e", "20000", "3"))
        .reply(":0\r\n");
    CHECK_EQ(f.sem.acquire(10000), Status::ok);
    f.mock.advance(1000);
    CHECK_EQ(f.sem.extend(20000), Status::ok);
    CHECK_EQ(f.sem.remaining_ms(), 20000U - 202U - 10U);
    // The lease ended on the server: expired, and the token is forgotten.
    CHECK_EQ(f.sem.extend(20000), Status::expired);
    CHECK(f.sem.token().empty());
    CHECK(f.mock.done());
}

TEST(extend_after_local_validity_ran_out_sends_nothing) {
    Fixture f;
    f.mock.on_connect().expect(script("t", "1000", "3")).reply("*2\r\n$1\r\n9\r\n:1000\r\n");
    std::uint64_t fence = 0;
    CHECK_EQ(f.sem.acquire(1000, &fence), Status::ok);
    CHECK_EQ(fence, 9U);
    f.mock.advance(1000);
    CHECK_EQ(f.sem.extend(1000), Status::expired);
    CHECK(f.mock.done());
}

TEST(an_extend_whose_reply_is_lost_keeps_no_more_validity_than_before) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("t", "10000", "3"))
        .reply(granted_10s)
        .expect(script("e", "500", "3"))
        .recv_timeout();
    CHECK_EQ(f.sem.acquire(10000), Status::ok);
    const std::uint32_t sent_at = f.mock.now_ms;
    CHECK_EQ(f.sem.extend(500), Status::unknown_outcome);
    // The new TTL (500 - 7) counted from the send time, 2000 ms (the timeout) ago: run out.
    CHECK_EQ(f.mock.now_ms - sent_at, 2000U);
    CHECK_EQ(f.sem.remaining_ms(), 0U);
    CHECK(f.sem.token() == token0);
    CHECK(f.mock.done());
}

TEST(query_reads_count_own_lease_and_waiters) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("q", "0", "3", "0", ""))
        .reply("*3\r\n:2\r\n:-2\r\n:0\r\n")
        .expect(script("q", "0", "3"))
        .reply("*3\r\n:3\r\n:4000\r\n:2\r\n")
        .expect(script("q", "0", "3"))
        .reply("*3\r\n:3\r\n:-3\r\n:2\r\n")
        .expect(script("q", "0", "3"))
        .reply("*2\r\n:3\r\n:1\r\n");
    SemaphoreInfo info;
    CHECK_EQ(f.sem.query(info), Status::ok);
    CHECK_EQ(info.count, 2U);
    CHECK(!info.mine);
    CHECK_EQ(info.ttl_ms, -2);
    CHECK_EQ(info.waiters, 0U);
    CHECK_EQ(f.sem.adopt(token0), Status::ok);
    CHECK_EQ(f.sem.query(info), Status::ok);
    CHECK_EQ(info.count, 3U);
    CHECK(info.mine);
    CHECK_EQ(info.ttl_ms, 4000);
    CHECK_EQ(info.waiters, 2U);
    CHECK_EQ(f.sem.query(info), Status::protocol_error);
    CHECK_EQ(f.sem.query(info), Status::protocol_error);
    CHECK(f.mock.done());
}

// What holders() visited, as "label=ms" lines.
struct Seen {
    std::string text;
    static void add(void* ctx, const resplock::SemaphoreHolder& h) noexcept {
        auto& seen = static_cast<Seen*>(ctx)->text;
        seen.append(h.owner.data(), h.owner.size());
        seen += "=" + std::to_string(h.remaining_ms) + "\n";
    }
};

TEST(holders_reads_the_leases_in_pages_until_one_is_short) {
    Fixture f;
    // RESPLOCK_MAX_REPLY_VALUES 8: pages of 3 (a header and 6 values).
    f.mock.on_connect()
        .expect(script("h", "0", "3", "3", ""))
        .reply("*6\r\n$5\r\ndev-1\r\n:100\r\n$0\r\n\r\n:200\r\n$5\r\ndev-3\r\n:300\r\n")
        .expect(script("h", "3", "3", "3", ""))
        .reply("*2\r\n$5\r\ndev-4\r\n:400\r\n");
    Seen seen;
    CHECK_EQ(f.sem.holders(&Seen::add, &seen), Status::ok);
    CHECK_EQ(seen.text, std::string("dev-1=100\n=200\ndev-3=300\ndev-4=400\n"));
    CHECK(f.mock.done());
}

TEST(holders_with_none_live_or_a_full_last_page) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("h", "0", "3", "3", ""))
        .reply("*0\r\n")
        .expect(script("h", "0", "3", "3", ""))
        .reply("*6\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n$1\r\nc\r\n:3\r\n")
        .expect(script("h", "3", "3", "3", ""))
        .reply("*0\r\n");
    Seen seen;
    CHECK_EQ(f.sem.holders(&Seen::add, &seen), Status::ok);
    CHECK(seen.text.empty());
    CHECK_EQ(f.sem.holders(&Seen::add, &seen), Status::ok);
    CHECK_EQ(seen.text, std::string("a=1\nb=2\nc=3\n"));
    CHECK(f.mock.done());
}

TEST(holders_refuses_malformed_pages_before_visiting_any_of_them) {
    const char* bad[] = {
        ":1\r\n",                          // no array
        "*1\r\n$1\r\na\r\n",               // a label without its ms
        "*2\r\n:1\r\n:100\r\n",            // a label that is no string
        "*2\r\n$1\r\na\r\n:-1\r\n",        // negative ms
        "*2\r\n$1\r\na\r\n$3\r\n100\r\n",  // ms that is no integer
        "*8\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n$1\r\nc\r\n:3\r\n$1\r\nd\r\n:4\r\n",  // over a
                                                                                       // page
        "*2\r\n*1\r\n:1\r\n:1\r\n",                                  // a nested array
        "*2\r\n$33\r\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n:1\r\n",  // a label too long
    };
    for (const char* reply : bad) {
        Fixture f;
        f.mock.on_connect().expect(script("h", "0", "3", "3", "")).reply(reply);
        Seen seen;
        const Status s = f.sem.holders(&Seen::add, &seen);
        CHECK(s == Status::protocol_error || s == Status::too_large);
        CHECK(seen.text.empty());
    }
    Fixture f;
    CHECK_EQ(f.sem.holders(nullptr, nullptr), Status::invalid_argument);
    Fixture refused(0);
    Seen seen;
    CHECK_EQ(refused.sem.holders(&Seen::add, &seen), Status::invalid_argument);
    CHECK(f.mock.done());
}

TEST(an_owner_label_goes_in_front_of_the_token) {
    Fixture f;
    CHECK_EQ(f.sem.set_owner("bad label"), Status::invalid_argument);
    CHECK_EQ(f.sem.set_owner("dev-7"), Status::ok);
    const std::string_view labelled = "dev-7:000102030405060708090a0b0c0d0e0f";
    f.mock.on_connect().expect(script("t", "10000", "3", "0", labelled)).reply(granted_10s);
    CHECK_EQ(f.sem.acquire(10000), Status::ok);
    CHECK(f.sem.token() == labelled);
    // Held: a second acquisition by the same object is refused.
    CHECK_EQ(f.sem.acquire(10000), Status::invalid_argument);
    CHECK(f.mock.done());
}

TEST(buffer_min_fits_the_longest_request_and_one_byte_less_is_refused_unsent) {
    // A '}' but no hash tag: the companions' prefix is {XY}KEY, the longest there is.
    static char longest[RESPLOCK_MAX_KEY_LEN];
    std::memset(longest, 'k', sizeof longest);
    longest[0] = '}';
    static char token[resplock::max_token_len];
    std::memset(token, 'a', sizeof token);
    const std::string_view key(longest, sizeof longest);
    {
        support::MockConnection<8192> m(support::with_timeout(2000),
                                        resplock::semaphore_buffer_min());
        Semaphore sem(m.conn, key, Semaphore::max_limit, true);
        m.mock.accept_any_send = true;
        m.mock.on_connect().reply(":1\r\n");
        CHECK_EQ(sem.adopt({token, sizeof token}), Status::ok);
        CHECK_EQ(sem.extend(1000000000), Status::ok);
        CHECK(m.mock.done());
    }
    support::MockConnection<8192> m(support::with_timeout(2000),
                                    resplock::semaphore_buffer_min() - 1);
    Semaphore sem(m.conn, key, Semaphore::max_limit, true);
    CHECK_EQ(sem.adopt({token, sizeof token}), Status::ok);
    CHECK_EQ(sem.extend(1000000000), Status::too_large);
    CHECK(!sem.token().empty());  // kept: the release may be tried again
    CHECK_EQ(m.mock.connects, 0U);
}

TEST(an_attempt_that_does_not_fit_is_refused_unsent_and_keeps_no_token) {
    // A previous request went out, so that "sent" cannot be read from the connection's state.
    support::MockConnection<8192> m(support::with_timeout(2000), 1400);
    Semaphore sem(m.conn, "k", 3);
    m.mock.on_connect().expect(wire::cmd({"PING"})).reply("+PONG\r\n");
    const std::string_view ping[] = {"PING"};
    resplock::resp::Reply reply;
    CHECK_EQ(m.conn.command(ping, 1, reply, resplock::Deadline::after(m.port, 1000)), Status::ok);
    CHECK_EQ(sem.acquire(10000), Status::too_large);
    CHECK(sem.token().empty());
    CHECK_EQ(sem.try_acquire(10000, 1000), Status::too_large);
    CHECK(sem.token().empty());
    CHECK(m.mock.done());
}

TEST(a_lock_ref_reaches_the_semaphore) {
    Fixture f;
    f.mock.on_connect()
        .expect(script("e", "5000", "3"))
        .reply(":1\r\n")
        .expect(script("r", "0", "3"))
        .reply(":1\r\n");
    CHECK_EQ(f.sem.adopt(token0), Status::ok);
    const resplock::LockRef ref = resplock::LockRef::to(f.sem);
    CHECK(ref.key() == "k");
    CHECK(ref.token() == token0);
    CHECK_EQ(ref.extend(5000, 1000), Status::ok);
    CHECK_EQ(ref.remaining_ms(), 5000U - 52U);
    CHECK_EQ(ref.release(), Status::ok);
    CHECK(ref.token().empty());
    CHECK(f.mock.done());
}

}  // namespace
