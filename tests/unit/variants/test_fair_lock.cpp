// FairLock (src/variants/fair_lock.cpp) over the mock port: the exact script requests and the
// wake-up BLPOP, the validity of a waiter woken by a hand-off (counted from its last attempt, never
// from the BLPOP, even when the hand-off came before the BLPOP was sent), blocks bounded by the
// holder's PTTL, leaving the queue when the wait runs out, and the keys it refuses.
#include <cstring>

#include "check.hpp"
#include "mock_connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/mock.hpp"
#include "resplock/variants/fair_lock.hpp"
#include "wire.hpp"

using resplock::FairLock;
using resplock::Status;
using resplock::mock::MockPort;

namespace {

using wire::token0;

constexpr std::string_view fair_sha = "5a4fc7e2ab7a23d8dc387fb1dc6fb9adf58e5a39";
// One run of the script for key "k" and token0: TTL 10000 ms, timeout 2000 ms (blocks of at most
// 1000 ms, entries living 2 x 1000 + 100 ms), a fencing number asked for or not.
std::string_view run(std::string_view op, std::string_view fence = "0",
                     std::string_view ttl = "10000", std::string_view entry = "2100") {
    return wire::cmd({"EVALSHA", fair_sha, "4", "k", "{k}:q", "{k}:w", "{k}:fence", op, token0, ttl,
                      entry, "{k}:f:", fence});
}
const std::string_view join0 = run("a");
const std::string_view once0 = run("t");
const std::string_view leave0 = run("l");
const std::string_view release0 = run("r", "0", "0", "0");
constexpr std::string_view woken =
    "*2\r\n$38\r\n{k}:f:000102030405060708090a0b0c0d0e0f\r\n$1\r\n1\r\n";
constexpr std::string_view busy_5s = "*2\r\n:0\r\n:5000\r\n";

std::string_view blpop(std::string_view seconds) {
    return wire::cmd({"BLPOP", "{k}:f:000102030405060708090a0b0c0d0e0f", seconds});
}

struct Fixture : support::MockConnection<2048> {
    FairLock lock;

    explicit Fixture(std::string_view key = "k")
        : MockConnection(support::with_timeout(2000), 2048), lock(conn, key) {}
};

// The drift allowance of a 10000 ms TTL: 10000 / 100 + 2.
constexpr std::uint32_t drift = 102;

TEST(one_attempt_takes_a_free_lock_with_the_ttl_the_server_reports) {
    Fixture f;
    f.mock.on_connect()
        .expect(once0)
        .reply("*2\r\n:1\r\n:10000\r\n")
        .expect(release0)
        .reply(":1\r\n");
    CHECK_EQ(f.lock.acquire(10000), Status::ok);
    CHECK_EQ(f.lock.remaining_ms(), 10000U - drift);
    CHECK(f.lock.token() == token0);
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

TEST(a_wrongtype_release_keeps_the_token_it_says_nothing_of_who_holds_key) {
    // The release script also touches the queue keys: a WRONGTYPE may come from one of them
    // (another client's plain lock named like the queue). The holder keeps its token and is
    // told of the error, instead of dropping a lock that KEY still holds.
    Fixture f;
    f.mock.on_connect()
        .expect(once0)
        .reply("*2\r\n:1\r\n:10000\r\n")
        .expect(release0)
        .reply("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    CHECK_EQ(f.lock.acquire(10000), Status::ok);
    CHECK_EQ(f.lock.release(), Status::wrong_type);
    CHECK(f.lock.token() == token0);
    CHECK(!f.lock.held());
    CHECK(f.mock.done());
}

TEST(a_release_refused_before_it_ran_is_retried) {
    Fixture f;
    f.mock.on_connect()
        .expect(once0)
        .reply("*2\r\n:1\r\n:10000\r\n")
        .expect(release0)
        .reply("-CLUSTERDOWN The cluster is down\r\n")
        .expect(release0)
        .reply(":1\r\n");
    CHECK_EQ(f.lock.acquire(10000), Status::ok);
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK_EQ(f.mock.sleeps, 1U);
    CHECK(f.mock.done());
}

TEST(one_attempt_that_finds_the_lock_busy_does_not_queue) {
    Fixture f;
    f.mock.on_connect().expect(once0).reply(busy_5s);
    CHECK_EQ(f.lock.acquire(10000), Status::busy);
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

// The hand-off came after the attempt was answered and before the BLPOP went out: the BLPOP
// returns at once, and validity counts from the attempt's send time, not the BLPOP's.
TEST(validity_after_a_wake_counts_from_the_last_attempt_not_the_blpop) {
    Fixture f;
    f.mock.on_connect()
        .expect(join0)
        .recv_delay(300)
        .reply(busy_5s)
        .expect(blpop("1.000"))
        .reply(woken);
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.try_acquire(10000, 8000), Status::ok);
    CHECK_EQ(f.mock.now_ms - start, 300U);
    // 300 ms went by after the attempt was sent; the BLPOP was sent after them.
    CHECK_EQ(f.lock.remaining_ms(), 10000U - drift - 300U);
    CHECK(f.mock.done());
}

TEST(validity_after_a_wake_in_the_middle_of_a_block) {
    Fixture f;
    f.mock.on_connect()
        .expect(join0)
        .reply(busy_5s)
        .expect(blpop("1.000"))
        .recv_delay(400)
        .reply(woken);
    CHECK_EQ(f.lock.try_acquire(10000, 8000), Status::ok);
    CHECK_EQ(f.lock.remaining_ms(), 10000U - drift - 400U);
    CHECK(f.mock.done());
}

// A hand-off before a refresh: the refresh itself answers held, with KEY's PTTL read after it
// was sent.
TEST(a_refresh_that_finds_the_lock_handed_over_takes_the_pttl) {
    Fixture f;
    f.mock.on_connect()
        .expect(join0)
        .reply(busy_5s)
        .expect(blpop("1.000"))
        .recv_delay(1000)
        .reply("*-1\r\n")
        .expect(join0)
        .reply("*2\r\n:1\r\n:4000\r\n");
    CHECK_EQ(f.lock.try_acquire(10000, 8000), Status::ok);
    CHECK_EQ(f.lock.remaining_ms(), 4000U - 42U);
    CHECK(f.mock.done());
}

// A block never outlasts the holder's PTTL, Redis's 100 ms timer tick included: 150 ms left
// block 50 ms; 80 ms left are slept.
TEST(blocks_end_before_the_holders_pttl) {
    Fixture f;
    f.mock.on_connect()
        .expect(join0)
        .reply("*2\r\n:0\r\n:150\r\n")
        .expect(blpop("0.050"))
        .recv_delay(50)
        .reply("*-1\r\n")
        .expect(join0)
        .reply("*2\r\n:0\r\n:80\r\n")
        .expect(join0)
        .reply("*2\r\n:1\r\n:10000\r\n");
    CHECK_EQ(f.lock.try_acquire(10000, 8000), Status::ok);
    CHECK_EQ(f.mock.sleeps, 1U);
    CHECK_EQ(f.mock.slept_ms, 80U);
    CHECK(f.mock.done());
}

TEST(a_wait_that_runs_out_leaves_the_queue) {
    Fixture f;
    f.mock.on_connect()
        .expect(join0)
        .reply(busy_5s)
        .expect(blpop("0.200"))  // 300 ms left, minus the tick
        .recv_delay(200)
        .reply("*-1\r\n")
        .expect(join0)
        .reply(busy_5s)  // 100 ms left: slept, not blocked
        .expect(join0)
        .reply(busy_5s)
        .expect(leave0)
        .reply("*2\r\n:0\r\n:4500\r\n");
    CHECK_EQ(f.lock.try_acquire(10000, 300), Status::busy);
    CHECK(f.lock.token().empty());
    CHECK_EQ(f.lock.remaining_ms(), 0U);
    CHECK(f.mock.done());
}

TEST(leaving_takes_a_lock_handed_over_meanwhile) {
    Fixture f;
    f.mock.on_connect()
        .expect(join0)
        .reply(busy_5s)
        .expect(blpop("0.200"))
        .recv_delay(200)
        .reply("*-1\r\n")
        .expect(join0)
        .reply(busy_5s)
        .expect(join0)
        .reply(busy_5s)
        .expect(leave0)
        .reply("*2\r\n:1\r\n:9000\r\n");
    CHECK_EQ(f.lock.try_acquire(10000, 300), Status::ok);
    CHECK_EQ(f.lock.remaining_ms(), 9000U - 92U);
    CHECK(f.mock.done());
}

TEST(a_wake_item_of_another_list_is_not_a_hand_off) {
    Fixture f;
    f.mock.on_connect()
        .expect(join0)
        .reply(busy_5s)
        .expect(blpop("1.000"))
        .reply("*2\r\n$5\r\nother\r\n$1\r\n1\r\n")
        .expect(join0)
        .reply("*2\r\n:1\r\n:10000\r\n");
    CHECK_EQ(f.lock.try_acquire(10000, 8000), Status::ok);
    CHECK(f.mock.done());
}

TEST(a_malformed_answer_keeps_the_token_without_validity) {
    Fixture f;
    f.mock.on_connect().expect(once0).reply("*2\r\n:1\r\n:0\r\n");
    CHECK_EQ(f.lock.acquire(10000), Status::protocol_error);
    CHECK(f.lock.token() == token0);
    CHECK_EQ(f.lock.remaining_ms(), 0U);
    CHECK(f.mock.done());
}

TEST(empty_and_oversized_keys_are_refused_unsent) {
    // Every other key has companion names in its slot (companion_prefix, test_companion).
    static char longest[RESPLOCK_MAX_KEY_LEN + 1];
    std::memset(longest, 'k', sizeof longest);
    for (std::string_view key : {std::string_view(), std::string_view(longest, sizeof longest)}) {
        Fixture f(key);
        CHECK_EQ(f.lock.acquire(1000), Status::invalid_argument);
        CHECK_EQ(f.lock.try_acquire(1000, 100), Status::invalid_argument);
        CHECK_EQ(f.mock.connects, 0U);
    }
}

}  // namespace

TEST(an_attempt_that_does_not_fit_is_refused_unsent_and_keeps_no_token) {
    // A previous request went out, so that "sent" cannot be read from the connection's state.
    support::MockConnection<2048> m(support::with_timeout(2000), 900);
    FairLock lock(m.conn, "k");
    m.mock.on_connect().expect(wire::cmd({"PING"})).reply("+PONG\r\n");
    const std::string_view ping[] = {"PING"};
    resplock::resp::Reply reply;
    CHECK_EQ(m.conn.command(ping, 1, reply, resplock::Deadline::after(m.port, 1000)), Status::ok);
    CHECK_EQ(lock.acquire(10000), Status::too_large);
    CHECK(lock.token().empty());
    CHECK_EQ(lock.try_acquire(10000, 1000), Status::too_large);
    CHECK(lock.token().empty());
    CHECK(m.mock.done());
}

// Every grant passes the write check (set_replicas(); a router's confirmation): a grant taken by
// an attempt and one handed over (the BLPOP that takes it is the waiter's own write after the
// hand-off's, so the WAIT covers both). A grant that fails it is given back with the fair release
// (handing the lock on) and asked for again within the wait with the same token, over a new
// connection; without time for another attempt, not_replicated is the answer.
TEST(an_attempt_grant_passes_the_write_check_and_is_asked_for_again_when_it_fails) {
    Fixture f;
    CHECK_EQ(f.lock.set_replicas(256), Status::invalid_argument);
    CHECK_EQ(f.lock.set_replicas(1), Status::ok);
    f.mock.on_connect()
        .expect(join0)
        .reply("*2\r\n:1\r\n:10000\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":0\r\n")
        .expect(release0)
        .reply(":1\r\n")
        .on_connect()
        .expect(join0)
        .reply("*2\r\n:1\r\n:10000\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":1\r\n");
    CHECK_EQ(f.lock.try_acquire(10000, 5000), Status::ok);
    CHECK(f.lock.held());
    CHECK(f.lock.token() == token0);
    CHECK_EQ(f.lock.replicas_acknowledged(), 1U);
    CHECK_EQ(f.mock.connects, 2U);
    CHECK(f.mock.done());

    Fixture g;
    CHECK_EQ(g.lock.set_replicas(1), Status::ok);
    g.mock.on_connect()
        .expect(once0)
        .reply("*2\r\n:1\r\n:10000\r\n")
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":0\r\n")
        .expect(release0)
        .reply(":1\r\n");
    CHECK_EQ(g.lock.acquire(10000), Status::not_replicated);
    CHECK(!g.lock.held());
    CHECK(g.lock.token().empty());  // given back
    CHECK(g.mock.done());
}

TEST(a_hand_off_passes_the_write_check_and_the_wait_goes_on_when_it_fails) {
    Fixture f;
    CHECK_EQ(f.lock.set_replicas(1), Status::ok);
    f.mock.on_connect()
        .expect(join0)
        .reply(busy_5s)
        .expect(blpop("1.000"))
        .reply(woken)
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":0\r\n")
        .expect(release0)
        .reply(":1\r\n")
        .on_connect()
        .expect(join0)  // joins anew: the hand-off took the entry
        .reply(busy_5s)
        .expect(blpop("1.000"))
        .reply(woken)
        .expect(wire::cmd({"WAIT", "1", "1000"}))
        .reply(":1\r\n");
    CHECK_EQ(f.lock.try_acquire(10000, 8000), Status::ok);
    CHECK(f.lock.held());
    CHECK(f.lock.token() == token0);
    CHECK(f.mock.done());
}

// With a fence asked for, a grant carries the number (the plain lock's KEY:fence), taken by the
// attempt, handed over (the wake item), or found by a refresh or the leave; a grant without a
// valid number is malformed.
TEST(fencing_numbers_come_with_every_kind_of_grant) {
    const std::string_view join_f = run("a", "1");
    const std::string_view granted = "*3\r\n:1\r\n:10000\r\n$16\r\n1795778052223229\r\n";
    constexpr std::uint64_t number = 1795778052223229ULL;
    {
        Fixture f;
        f.mock.on_connect().expect(run("t", "1")).reply(granted);
        std::uint64_t fence = 0;
        CHECK_EQ(f.lock.acquire(10000, &fence), Status::ok);
        CHECK_EQ(fence, number);
        CHECK(f.mock.done());
    }
    {
        Fixture f;
        f.mock.on_connect()
            .expect(join_f)
            .reply(busy_5s)
            .expect(blpop("1.000"))
            .reply(
                "*2\r\n$38\r\n{k}:f:000102030405060708090a0b0c0d0e0f\r\n$16\r\n"
                "1795778052223230\r\n");
        std::uint64_t fence = 0;
        CHECK_EQ(f.lock.try_acquire(10000, 8000, &fence), Status::ok);
        CHECK_EQ(fence, number + 1);
        CHECK(f.mock.done());
    }
    {
        // A wake item that is no number: the next attempt answers for the lock.
        Fixture f;
        f.mock.on_connect()
            .expect(join_f)
            .reply(busy_5s)
            .expect(blpop("1.000"))
            .reply("*2\r\n$38\r\n{k}:f:000102030405060708090a0b0c0d0e0f\r\n$1\r\nx\r\n")
            .expect(join_f)
            .reply(granted);
        std::uint64_t fence = 0;
        CHECK_EQ(f.lock.try_acquire(10000, 8000, &fence), Status::ok);
        CHECK_EQ(fence, number);
        CHECK(f.mock.done());
    }
    for (const std::string_view bad : {std::string_view("*2\r\n:1\r\n:10000\r\n"),
                                       std::string_view("*3\r\n:1\r\n:10000\r\n:5\r\n"),
                                       std::string_view("*3\r\n:0\r\n:10000\r\n$1\r\n5\r\n")}) {
        Fixture f;
        f.mock.on_connect().expect(run("t", "1")).reply(bad);
        std::uint64_t fence = 7;
        CHECK_EQ(f.lock.acquire(10000, &fence), Status::protocol_error);
        CHECK_EQ(fence, 7U);
        CHECK(!f.lock.held());
        CHECK(f.lock.token() == token0);  // release() may undo what the script did
        CHECK(f.mock.done());
    }
}

TEST(an_owner_label_goes_in_front_of_the_token) {
    Fixture f;
    CHECK_EQ(f.lock.set_owner("bad label"), Status::invalid_argument);
    CHECK_EQ(f.lock.set_owner("dev-7"), Status::ok);
    const std::string_view labelled = "dev-7:000102030405060708090a0b0c0d0e0f";
    f.mock.on_connect()
        .expect(wire::cmd({"EVALSHA", fair_sha, "4", "k", "{k}:q", "{k}:w", "{k}:fence", "t",
                           labelled, "10000", "2100", "{k}:f:", "0"}))
        .reply("*2\r\n:1\r\n:10000\r\n");
    CHECK_EQ(f.lock.acquire(10000), Status::ok);
    CHECK(f.lock.token() == labelled);
    CHECK(f.mock.done());
}
