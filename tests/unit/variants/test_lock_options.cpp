// Lock's calls with AcquireOptions (src/core/lock.cpp) over the mock port: the exact
// acquire-script requests (KEYS and ARGV with and without KEY:once and KEY:fence), the NOSCRIPT
// fallback, busy replies carrying the PTTL that bounds the wait, fence numbers (decimal digits in
// a bulk string, exact over all 63 bits INCR can reach, and nothing else), the refusal of a
// request whose EVAL form would not fit, what an error or a lost reply leaves, the wake-up BLPOP
// (its timeout, when it is not used, the switch to sleeping) and the release that wakes a waiter.
#include <cstdio>
#include <cstring>

#include "check.hpp"
#include "mock_connection.hpp"
#include "resplock/core/companion.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/lock_options.hpp"
#include "resplock/ports/mock.hpp"
#include "wire.hpp"

using resplock::AcquireOptions;
using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::Status;
using resplock::mock::MockPort;

namespace {

using wire::noscript;
using wire::owner_sha;
using wire::token0;
using wire::zeros;
using namespace std::string_view_literals;

// With constant_random() every token is `zeros` and every jitter is backoff/2.
// The fence number is the larger of KEY:fence + 1 and the server's TIME in microseconds, sent
// back as the digits GET KEY:fence returns (a bulk string: Lua's numbers are doubles).
constexpr std::string_view acquire_sha = "61429715f14556dea4eeee434d0ac26b51123643";
constexpr std::string_view acquire_text =
    "pcall(redis.replicate_commands) local k,a,r=KEYS,ARGV,redis.call local o=a[3] and k[2] "
    "local t=o and r('pttl',o) or -2 if t==-2 and r('set',k[1],a[1],'nx','px',a[2]) then if o "
    "then r('set',o,a[1],'px',a[3]) end local f=k[o and 3 or 2] if not f then return 0 end local "
    "s=r('time') local c=s[1]*1000000+s[2] if (tonumber(r('get',f) or 0) or c)<c then "
    "r('set',f,string.format('%.0f',c)) else r('incr',f) end return r('get',f) end "
    "return {math.max(t,r('pttl',k[1]))}";
// A fence number of about today's clock in microseconds, as the script sends it.
constexpr std::string_view clock_fence = "$16\r\n1799999999999999\r\n";
constexpr std::string_view release_sha = "bbdb698c6b97f01e8d686165c74d747ab585f97e";
constexpr std::string_view release_text =
    "local k,r=KEYS,redis.call local v=r('get',k[1]) if v~=ARGV[1] then return v and -1 or 0 "
    "end r('del',k[1],k[2]) r('rpush',k[2],1) r('pexpire',k[2],1000) return 1";
// The acquire script's requests for key "k", TTL 1000 ms and (once) an interval of 60000 ms.
const std::string_view fenced0 =
    wire::cmd({"EVALSHA", acquire_sha, "2", "k", "{k}:fence", token0, "1000"});
const std::string_view fenced_zeros =
    wire::cmd({"EVALSHA", acquire_sha, "2", "k", "{k}:fence", zeros, "1000"});
const std::string_view waking_zeros = wire::cmd({"EVALSHA", acquire_sha, "1", "k", zeros, "1000"});
const std::string_view once0 =
    wire::cmd({"EVALSHA", acquire_sha, "2", "k", "{k}:once", token0, "1000", "60000"});
const std::string_view fenced_once0 =
    wire::cmd({"EVALSHA", acquire_sha, "3", "k", "{k}:once", "{k}:fence", token0, "1000", "60000"});
const std::string_view blpop_5ms = wire::cmd({"BLPOP", "{k}:wake", "0.005"});
const std::string_view release0 = wire::cmd({"EVALSHA", release_sha, "2", "k", "{k}:wake", token0});

AcquireOptions options(bool fence, std::uint32_t once_per_ms = 0, bool wake = false) {
    AcquireOptions o;
    o.fence = fence;
    o.once_per_ms = once_per_ms;
    o.wake = wake;
    return o;
}
const AcquireOptions fence_only = options(true);
const AcquireOptions wake_only = options(false, 0, true);
const AcquireOptions fence_and_wake = options(true, 0, true);

struct Fixture : support::MockConnection<1024> {
    Lock lock;

    explicit Fixture(std::uint32_t timeout_ms = 2000, std::size_t buf_size = 1024,
                     std::string_view key = "k")
        : MockConnection(support::with_timeout(timeout_ms), buf_size), lock(conn, key) {}
    // Every token `zeros`, every pause backoff/2 (5, 10, 20, ... ms).
    void constant_random() {
        mock.random_next = 0;
        mock.random_step = 0;
    }
    // Acquires "k" with token0 through the fence script (fence number 1799999999999999).
    void acquired() {
        mock.on_connect().expect(fenced0).reply(clock_fence);
        std::uint64_t fence = 0;
        CHECK_EQ(lock.acquire(1000, fence_only, &fence), Status::ok);
    }
};

}  // namespace

// ---- which request ----

TEST(options_without_fence_or_once_acquire_with_the_plain_set) {
    for (const AcquireOptions& o : {options(false), wake_only}) {
        Fixture f;
        f.mock.on_connect()
            .expect(wire::cmd({"SET", "k", token0, "NX", "PX", "1000"}))
            .reply("+OK\r\n");
        CHECK_EQ(f.lock.acquire(1000, o), Status::ok);
        CHECK_EQ(f.lock.remaining_ms(), 988U);
        CHECK(f.mock.done());
    }
    // try_acquire too, unless it is asked to wake: no option at all is the plain call.
    Fixture f;
    f.mock.on_connect()
        .expect(wire::cmd({"SET", "k", token0, "NX", "PX", "1000"}))
        .reply("$-1\r\n");
    CHECK_EQ(f.lock.try_acquire(1000, 0, options(false)), Status::busy);
    CHECK(f.mock.done());
}

TEST(fence_sends_the_script_with_key_and_key_fence_and_returns_the_number) {
    Fixture f;
    f.mock.on_connect().expect(fenced0).reply("$1\r\n7\r\n");
    std::uint64_t fence = 0;
    CHECK_EQ(f.lock.acquire(1000, fence_only, &fence), Status::ok);
    CHECK_EQ(fence, 7U);
    CHECK(f.lock.held());
    CHECK(f.lock.token() == token0);
    CHECK_EQ(f.lock.remaining_ms(), 988U);
    CHECK(f.mock.done());
}

TEST(fence_numbers_are_exact_up_to_int64_max) {
    // Today's clock in microseconds, 2^53 - 1 and 2^53 + 1 (the first integer a double misses),
    // a counter set far above the clock, and INT64_MAX (the most INCR reaches).
    struct Case {
        std::string_view reply;
        std::uint64_t number;
    };
    const Case cases[] = {
        {clock_fence, 1799999999999999U},
        {"$16\r\n9007199254740991\r\n", 9007199254740991U},
        {"$16\r\n9007199254740993\r\n", 9007199254740993U},
        {"$19\r\n9000000000000000001\r\n", 9000000000000000001U},
        {"$19\r\n9223372036854775806\r\n", 9223372036854775806U},
        {"$19\r\n9223372036854775807\r\n", 9223372036854775807U},
        {"$1\r\n1\r\n", 1U},
    };
    for (const Case& c : cases) {
        Fixture f;
        f.mock.on_connect().expect(fenced0).reply(c.reply);
        std::uint64_t fence = 0;
        CHECK_EQ(f.lock.acquire(1000, fence_only, &fence), Status::ok);
        if (!CHECK_EQ(fence, c.number)) std::printf("      reply %.*s\n", 24, c.reply.data());
        CHECK(f.lock.held());
        CHECK(f.mock.done());
    }
}

TEST(once_per_sends_key_once_and_the_interval_and_no_fence_key) {
    Fixture f;
    f.mock.on_connect().expect(once0).reply(":0\r\n");
    std::uint64_t fence = 42;
    CHECK_EQ(f.lock.acquire(1000, options(false, 60000), &fence), Status::ok);
    CHECK_EQ(fence, 42U);  // no fence asked: left alone
    CHECK(f.lock.held());
    CHECK(f.mock.done());
    // The fence pointer may be null without a fence.
    Fixture g;
    g.mock.on_connect().expect(once0).reply(":0\r\n");
    CHECK_EQ(g.lock.acquire(1000, options(false, 60000)), Status::ok);
    CHECK(g.mock.done());
}

TEST(fence_and_once_send_three_keys) {
    Fixture f;
    f.mock.on_connect().expect(fenced_once0).reply("$1\r\n3\r\n");
    std::uint64_t fence = 0;
    CHECK_EQ(f.lock.acquire(1000, options(true, 60000), &fence), Status::ok);
    CHECK_EQ(fence, 3U);
    CHECK(f.mock.done());
}

TEST(wake_alone_waits_through_the_script_with_the_key_only) {
    Fixture f;
    f.constant_random();
    f.mock.on_connect().expect(waking_zeros).reply(":0\r\n");
    CHECK_EQ(f.lock.try_acquire(1000, 0, wake_only), Status::ok);
    CHECK(f.lock.token() == zeros);
    CHECK_EQ(f.lock.remaining_ms(), 988U);
    CHECK(f.mock.done());
}

TEST(noscript_falls_back_to_eval_with_the_same_arguments) {
    Fixture f;
    f.mock.on_connect()
        .expect(fenced_once0)
        .reply(noscript)
        .expect(wire::cmd(
            {"EVAL", acquire_text, "3", "k", "{k}:once", "{k}:fence", token0, "1000", "60000"}))
        .reply("$2\r\n12\r\n");
    std::uint64_t fence = 0;
    CHECK_EQ(f.lock.acquire(1000, options(true, 60000), &fence), Status::ok);
    CHECK_EQ(fence, 12U);
    CHECK(f.lock.held());
    CHECK(f.mock.done());
}

TEST(validity_counts_from_before_the_script_was_sent) {
    Fixture f;
    f.mock.on_connect().expect(fenced0).recv_delay(300).reply(clock_fence);
    std::uint64_t fence = 0;
    CHECK_EQ(f.lock.acquire(1000, fence_only, &fence), Status::ok);
    CHECK_EQ(f.lock.remaining_ms(), 688U);
    CHECK(f.mock.done());
}

// ---- busy ----

TEST(a_busy_reply_claims_nothing) {
    Fixture f;
    f.mock.on_connect().expect(fenced0).reply("*1\r\n:1500\r\n");
    std::uint64_t fence = 99;
    CHECK_EQ(f.lock.acquire(1000, fence_only, &fence), Status::busy);
    CHECK_EQ(fence, 99U);
    CHECK(!f.lock.held());
    CHECK(f.lock.token().empty());
    CHECK_EQ(f.mock.sleeps, 0U);  // acquire is one attempt
    CHECK(f.mock.done());
}

TEST(the_busy_replys_pttl_bounds_the_pause_and_no_query_is_sent) {
    Fixture f;
    f.constant_random();
    // PTTL 3: a pause of 3 ms instead of 5; then -2 (lock and marker both gone): no pause.
    f.mock.on_connect()
        .expect(fenced_zeros)
        .reply("*1\r\n:3\r\n")
        .expect(fenced_zeros)
        .reply("*1\r\n:-2\r\n")
        .expect(fenced_zeros)
        .reply("$1\r\n4\r\n");
    std::uint64_t fence = 0;
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.try_acquire(1000, 5000, fence_only, &fence), Status::ok);
    CHECK_EQ(fence, 4U);
    CHECK_EQ(f.mock.sleeps, 1U);
    CHECK_EQ(f.mock.slept_ms, 3U);
    CHECK_EQ(f.mock.now_ms - start, 3U);
    CHECK(f.mock.done());
}

TEST(once_per_stays_busy_until_the_wait_runs_out) {
    Fixture f;
    f.constant_random();
    // The marker outlives the wait: pauses of 5, 10, 20 ms, then the 15 left; five attempts.
    const std::string_view once_zeros =
        wire::cmd({"EVALSHA", acquire_sha, "2", "k", "{k}:once", zeros, "1000", "60000"});
    f.mock.on_connect();
    for (int i = 0; i < 5; ++i)
        f.mock.expect(once_zeros).reply("*1\r\n:59000\r\n");
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.try_acquire(1000, 50, options(false, 60000)), Status::busy);
    CHECK_EQ(f.mock.now_ms - start, 50U);
    CHECK_EQ(f.mock.sleeps, 4U);
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

// ---- what a reply means ----

// With a fence the grant is a bulk string of the digits of 1..INT64_MAX, no leading zero. Zero,
// a negative number, one past INT64_MAX, anything not plain digits and an integer reply (what the
// script without a fence key sends) are no answer of its.
TEST(a_fence_reply_other_than_the_digits_of_1_to_int64_max_is_a_protocol_error) {
    for (const std::string_view reply : {"$1\r\n0\r\n",
                                         "$2\r\n-1\r\n",
                                         "$2\r\n-5\r\n",
                                         "$19\r\n9223372036854775808\r\n",
                                         "$20\r\n18446744073709551615\r\n",
                                         "$20\r\n10000000000000000000\r\n",
                                         "$20\r\n00000000000000000001\r\n",
                                         "$2\r\n07\r\n",
                                         "$0\r\n\r\n",
                                         "$3\r\n1.5\r\n",
                                         "$5\r\n1e+15\r\n",
                                         "$2\r\n+7\r\n",
                                         "$2\r\n 7\r\n",
                                         "$2\r\n7 \r\n",
                                         "$2\r\n1a\r\n",
                                         "$3\r\nabc\r\n",
                                         "$-1\r\n",
                                         "+7\r\n",
                                         ":0\r\n",
                                         ":-1\r\n",
                                         ":1\r\n",
                                         ":1799999999999999\r\n",
                                         "*1\r\n$1\r\n7\r\n",
                                         "*0\r\n"}) {
        Fixture f;
        f.mock.on_connect().expect(fenced0).reply(reply);
        std::uint64_t fence = 99;
        CHECK_EQ(f.lock.acquire(1000, fence_only, &fence), Status::protocol_error);
        CHECK_EQ(fence, 99U);
        CHECK(!f.lock.held());
        CHECK_EQ(f.lock.remaining_ms(), 0U);
        CHECK(f.lock.token() == token0);  // the SET may have run: release() can undo it
        CHECK(f.mock.done());
    }
}

// Without a fence key the script's grant is exactly 0: another number is no answer of its.
TEST(without_a_fence_only_0_is_a_grant) {
    for (const std::string_view reply :
         {":5\r\n"sv, ":-1\r\n"sv, ":1\r\n"sv, "$1\r\n0\r\n"sv, "$1\r\n1\r\n"sv, clock_fence}) {
        Fixture f;
        f.mock.on_connect().expect(once0).reply(reply);
        CHECK_EQ(f.lock.acquire(1000, options(false, 60000)), Status::protocol_error);
        CHECK(!f.lock.held());
        CHECK_EQ(f.lock.remaining_ms(), 0U);
        CHECK(f.lock.token() == token0);  // the SET may have run: release() can undo it
        CHECK(f.mock.done());
    }
}

TEST(a_reply_neither_a_number_nor_a_busy_pttl_is_a_protocol_error) {
    for (const std::string_view reply : {"+OK\r\n", "$1\r\n1\r\n", "*1\r\n$2\r\n10\r\n",
                                         "*2\r\n:1\r\n:2\r\n", "*0\r\n", "$-1\r\n"}) {
        Fixture f;
        f.mock.on_connect().expect(once0).reply(reply);
        CHECK_EQ(f.lock.acquire(1000, options(false, 60000)), Status::protocol_error);
        CHECK(!f.lock.held());
        CHECK(f.lock.token() == token0);
        CHECK(f.mock.done());
    }
}

TEST(an_error_reply_to_the_script_keeps_the_token_with_no_validity) {
    // An ACL without +time stops the script after its SET: the key may be set.
    Fixture f;
    f.mock.on_connect().expect(fenced0).reply(
        "-NOPERM this user has no permissions to run the 'time' command\r\n");
    std::uint64_t fence = 99;
    CHECK_EQ(f.lock.acquire(1000, fence_only, &fence), Status::no_permission);
    CHECK_EQ(fence, 99U);
    CHECK(!f.lock.held());
    CHECK(f.lock.token() == token0);
    // release() removes what the script may have set.
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0})).reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

TEST(an_error_before_the_script_went_out_keeps_nothing) {
    MockPort mock;
    const resplock_port_t port = mock.port();
    char buf[1024];
    ConnectionConfig c;
    c.password = "nope";
    Connection conn(port, c, buf, sizeof buf);
    Lock lock(conn, "k");
    mock.on_connect().expect(wire::cmd({"AUTH", "nope"})).reply("-WRONGPASS invalid\r\n");
    std::uint64_t fence = 0;
    CHECK_EQ(lock.acquire(1000, fence_only, &fence), Status::auth_failed);
    CHECK(lock.token().empty());
    mock.on_connect(RESPLOCK_PORT_REFUSED);
    CHECK_EQ(lock.acquire(1000, fence_only, &fence), Status::connect_failed);
    CHECK(lock.token().empty());
    CHECK(mock.done());
}

TEST(a_lost_reply_is_unknown_outcome_keeps_the_token_and_is_not_retried) {
    Fixture f(100);
    f.constant_random();
    f.mock.on_connect().expect(fenced_zeros).recv_timeout();
    std::uint64_t fence = 99;
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.try_acquire(1000, 5000, fence_only, &fence), Status::unknown_outcome);
    CHECK_EQ(f.mock.now_ms - start, 100U);
    CHECK_EQ(fence, 99U);
    CHECK(!f.lock.held());
    CHECK(f.lock.token() == zeros);
    CHECK_EQ(f.mock.sleeps, 0U);
    CHECK(f.mock.done());
}

TEST(connection_failures_before_sending_are_retried_within_the_wait) {
    Fixture f;
    f.constant_random();
    f.mock.on_connect(RESPLOCK_PORT_REFUSED).on_connect().expect(fenced_zeros).reply(clock_fence);
    std::uint64_t fence = 0;
    CHECK_EQ(f.lock.try_acquire(1000, 1000, fence_only, &fence), Status::ok);
    CHECK_EQ(f.mock.slept_ms, 5U);
    CHECK_EQ(fence, 1799999999999999U);
    CHECK(f.mock.done());
}

// ---- refused before sending ----

TEST(invalid_options_send_nothing) {
    Fixture f;
    CHECK_EQ(f.lock.acquire(1000, fence_only, nullptr), Status::invalid_argument);
    CHECK_EQ(f.lock.try_acquire(1000, 10, fence_only, nullptr), Status::invalid_argument);
    CHECK_EQ(f.lock.acquire(1000, options(false, resplock::max_ttl_ms + 1)),
             Status::invalid_argument);
    std::uint64_t fence = 0;
    CHECK_EQ(f.lock.acquire(0, fence_only, &fence), Status::invalid_argument);
    CHECK_EQ(f.lock.acquire(resplock::max_ttl_ms + 1, fence_only, &fence),
             Status::invalid_argument);
    CHECK_EQ(f.lock.try_acquire(1000, resplock::max_ttl_ms + 1, wake_only),
             Status::invalid_argument);
    Fixture empty(2000, 1024, "");
    CHECK_EQ(empty.lock.acquire(1000, fence_only, &fence), Status::invalid_argument);
    CHECK_EQ(empty.lock.try_acquire(1000, 10, wake_only), Status::invalid_argument);
    CHECK_EQ(empty.lock.release(wake_only), Status::invalid_argument);
    CHECK_EQ(f.lock.release(wake_only), Status::invalid_argument);  // no token
    f.mock.random_fails = true;
    CHECK_EQ(f.lock.acquire(1000, fence_only, &fence), Status::random_failed);
    CHECK_EQ(f.mock.connects + empty.mock.connects, 0U);
}

TEST(acquire_while_held_is_refused) {
    Fixture f;
    f.acquired();
    std::uint64_t fence = 0;
    CHECK_EQ(f.lock.acquire(1000, fence_only, &fence), Status::invalid_argument);
    CHECK_EQ(f.lock.try_acquire(1000, 100, wake_only), Status::invalid_argument);
    CHECK(f.lock.token() == token0);
    CHECK(f.mock.done());
}

TEST(nothing_is_sent_when_the_eval_form_would_not_fit) {
    const std::string_view eval = wire::cmd(
        {"EVAL", acquire_text, "3", "k", "{k}:once", "{k}:fence", token0, "1000", "60000"});
    // One byte short of the EVAL form, though the EVALSHA form would fit: refused up front, so
    // that the call does not work only while the server happens to cache the script.
    {
        Fixture f(2000, eval.size() - 1);
        REQUIRE(fenced_once0.size() < eval.size() - 1);
        std::uint64_t fence = 0;
        CHECK_EQ(f.lock.acquire(1000, options(true, 60000), &fence), Status::too_large);
        CHECK_EQ(f.mock.connects, 0U);
        CHECK(f.lock.token().empty());
    }
    // The exact size: sent, and the fallback fits.
    Fixture f(2000, eval.size());
    f.mock.on_connect().expect(fenced_once0).reply(noscript).expect(eval).reply(clock_fence);
    std::uint64_t fence = 0;
    CHECK_EQ(f.lock.acquire(1000, options(true, 60000), &fence), Status::ok);
    CHECK(f.mock.done());
}

TEST(lock_options_buffer_min_fits_the_longest_acquire_exactly) {
    // A '}' without a tag: the longest companion names ({XY} + KEY + suffix).
    static char key_bytes[RESPLOCK_MAX_KEY_LEN];
    std::memset(key_bytes, '}', RESPLOCK_MAX_KEY_LEN);
    const std::string_view key(key_bytes, RESPLOCK_MAX_KEY_LEN);
    static char fence_bytes[RESPLOCK_MAX_KEY_LEN + resplock::companion_prefix_extra + 6];
    std::size_t n = resplock::companion_prefix(key, fence_bytes);
    std::memcpy(fence_bytes + n, ":fence", 6);
    const std::string_view fence_key(fence_bytes, n + 6);
    static char once_bytes[RESPLOCK_MAX_KEY_LEN + resplock::companion_prefix_extra + 5];
    n = resplock::companion_prefix(key, once_bytes);
    std::memcpy(once_bytes + n, ":once", 5);
    const std::string_view once_key(once_bytes, n + 5);
    CHECK_EQ(fence_key.size(), sizeof fence_bytes);
    // The longest owner label too: its token is the longest a lock makes.
    static char label[resplock::max_owner_len];
    std::memset(label, 'o', sizeof label);
    AcquireOptions longest = options(true, resplock::max_ttl_ms);
    longest.owner = {label, sizeof label};
    static char token_bytes[resplock::max_owner_len + 1 + resplock::token_len];
    std::memcpy(token_bytes, label, sizeof label);
    token_bytes[sizeof label] = ':';
    std::memcpy(token_bytes + sizeof label + 1, token0.data(), token0.size());
    const std::string_view token(token_bytes, sizeof token_bytes);
    const std::size_t min = resplock::lock_options_buffer_min();
    CHECK_EQ(min, wire::cmd({"EVAL", acquire_text, "3", key, once_key, fence_key, token,
                             "2147483647", "2147483647"})
                      .size());
    for (const std::size_t size : {min, min - 1}) {
        Fixture f(2000, size, key);
        std::uint64_t fence = 0;
        if (size == min) {
            f.mock.on_connect()
                .expect(wire::cmd({"EVALSHA", acquire_sha, "3", key, once_key, fence_key, token,
                                   "2147483647", "2147483647"}))
                .reply(noscript)
                .expect(wire::cmd({"EVAL", acquire_text, "3", key, once_key, fence_key, token,
                                   "2147483647", "2147483647"}))
                .reply(clock_fence);
            CHECK_EQ(f.lock.acquire(resplock::max_ttl_ms, longest, &fence), Status::ok);
        } else {
            CHECK_EQ(f.lock.acquire(resplock::max_ttl_ms, longest, &fence), Status::too_large);
            CHECK_EQ(f.mock.connects, 0U);
        }
        CHECK(f.mock.done());
    }
}

// ---- waking on release ----

TEST(wake_blocks_on_key_wake_for_the_pause_in_decimal_seconds) {
    Fixture f;
    f.constant_random();
    // Pauses of 5, 10 and 20 ms, each a BLPOP that times out (a nil array) after that long.
    f.mock.on_connect();
    const char* seconds[] = {"0.005", "0.010", "0.020"};
    const std::uint32_t pauses[] = {5, 10, 20};
    for (int i = 0; i < 3; ++i) {
        f.mock.expect(fenced_zeros)
            .reply("*1\r\n:5000\r\n")
            .expect(wire::cmd({"BLPOP", "{k}:wake", seconds[i]}))
            .recv_delay(pauses[i])
            .reply("*-1\r\n");
    }
    f.mock.expect(fenced_zeros).reply("$1\r\n2\r\n");
    std::uint64_t fence = 0;
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.try_acquire(1000, 5000, fence_and_wake, &fence), Status::ok);
    CHECK_EQ(fence, 2U);
    CHECK_EQ(f.mock.sleeps, 0U);
    CHECK_EQ(f.mock.now_ms - start, 35U);
    CHECK(f.mock.done());
}

TEST(wake_a_release_ends_the_pause_at_once) {
    Fixture f;
    f.constant_random();
    f.mock.on_connect()
        .expect(waking_zeros)
        .reply("*1\r\n:5000\r\n")
        .expect(blpop_5ms)
        .recv_delay(1)
        .reply("*2\r\n$6\r\nk:wake\r\n$1\r\n1\r\n")
        .expect(waking_zeros)
        .reply(":0\r\n");
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.try_acquire(1000, 5000, wake_only), Status::ok);
    CHECK_EQ(f.mock.now_ms - start, 1U);
    CHECK_EQ(f.mock.sleeps, 0U);
    CHECK(f.mock.done());
}

// Redis ends a BLPOP only at its next 100 ms tick: a pause whose BLPOP could then outlast the
// holder's expiry or the caller's deadline is slept instead.
TEST(wake_no_blpop_when_the_pause_could_overrun_the_holders_expiry) {
    // PTTL 105 = pause 5 + 100: BLPOP. PTTL 104: sleep.
    {
        Fixture f;
        f.constant_random();
        f.mock.on_connect()
            .expect(waking_zeros)
            .reply("*1\r\n:105\r\n")
            .expect(blpop_5ms)
            .recv_delay(5)
            .reply("*-1\r\n")
            .expect(waking_zeros)
            .reply(":0\r\n");
        CHECK_EQ(f.lock.try_acquire(1000, 5000, wake_only), Status::ok);
        CHECK_EQ(f.mock.sleeps, 0U);
        CHECK(f.mock.done());
    }
    Fixture f;
    f.constant_random();
    f.mock.on_connect()
        .expect(waking_zeros)
        .reply("*1\r\n:104\r\n")
        .expect(waking_zeros)
        .reply(":0\r\n");
    CHECK_EQ(f.lock.try_acquire(1000, 5000, wake_only), Status::ok);
    CHECK_EQ(f.mock.sleeps, 1U);
    CHECK_EQ(f.mock.slept_ms, 5U);
    CHECK(f.mock.done());
}

TEST(wake_no_blpop_when_the_pause_could_overrun_the_deadline) {
    // A wait of 105 ms leaves room for pause 5 + 100: BLPOP, and its reply may take all that is
    // left. A wait of 104 ms: sleep.
    {
        Fixture f;
        f.constant_random();
        f.mock.on_connect()
            .expect(waking_zeros)
            .reply("*1\r\n:-1\r\n")
            .expect(blpop_5ms)
            .recv_timeout()  // the BLPOP is given the 105 ms left, not the 2000 ms timeout
            .on_connect()
            .expect(waking_zeros)
            .reply("*1\r\n:-1\r\n");
        const std::uint32_t start = f.mock.now_ms;
        CHECK_EQ(f.lock.try_acquire(1000, 105, wake_only), Status::busy);
        CHECK_EQ(f.mock.now_ms - start, 105U);
        CHECK_EQ(f.mock.sleeps, 0U);
        CHECK(f.mock.done());
    }
    Fixture f;
    f.constant_random();
    f.mock.on_connect()
        .expect(waking_zeros)
        .reply("*1\r\n:-1\r\n")
        .expect(waking_zeros)
        .reply(":0\r\n");
    CHECK_EQ(f.lock.try_acquire(1000, 104, wake_only), Status::ok);
    CHECK_EQ(f.mock.sleeps, 1U);
    CHECK_EQ(f.mock.slept_ms, 5U);
    CHECK(f.mock.done());
}

TEST(wake_a_lost_blpop_reply_costs_at_most_the_pause_the_tick_and_the_timeout) {
    Fixture f(300);
    f.constant_random();
    f.mock.on_connect()
        .expect(waking_zeros)
        .reply("*1\r\n:5000\r\n")
        .expect(blpop_5ms)
        .recv_timeout()  // 5 + 100 + 300 ms
        .on_connect()
        .expect(waking_zeros)
        .reply(":0\r\n");
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.try_acquire(1000, 5000, wake_only), Status::ok);
    CHECK_EQ(f.mock.now_ms - start, 405U);
    CHECK_EQ(f.mock.sleeps, 0U);  // the pause is over
    CHECK(f.mock.done());
}

TEST(wake_an_error_reply_to_blpop_sleeps_for_the_rest_of_the_wait) {
    Fixture f;
    f.constant_random();
    f.mock.on_connect()
        .expect(waking_zeros)
        .reply("*1\r\n:5000\r\n")
        .expect(blpop_5ms)
        .recv_delay(2)
        .reply("-NOPERM this user has no permissions to run the 'blpop' command\r\n")
        .expect(waking_zeros)
        .reply("*1\r\n:5000\r\n")
        .expect(waking_zeros)  // no BLPOP before it: the pause of 10 ms was slept
        .reply(":0\r\n");
    const std::uint32_t start = f.mock.now_ms;
    CHECK_EQ(f.lock.try_acquire(1000, 5000, wake_only), Status::ok);
    CHECK_EQ(f.mock.sleeps, 2U);
    CHECK_EQ(f.mock.slept_ms, 3U + 10U);  // the rest of the first pause, then the second
    CHECK_EQ(f.mock.now_ms - start, 15U);
    CHECK(f.mock.done());
    // The switch lasts for that wait only: the next one blocks again.
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", zeros}))
        .reply(":1\r\n")
        .expect(waking_zeros)
        .reply("*1\r\n:5000\r\n")
        .expect(blpop_5ms)
        .recv_delay(5)
        .reply("*-1\r\n")
        .expect(waking_zeros)
        .reply(":0\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK_EQ(f.lock.try_acquire(1000, 5000, wake_only), Status::ok);
    CHECK_EQ(f.mock.sleeps, 2U);
    CHECK(f.mock.done());
}

TEST(wake_release_runs_the_release_script_on_key_and_key_wake) {
    Fixture f;
    f.acquired();
    f.mock.expect(release0).reply(":1\r\n");
    CHECK_EQ(f.lock.release(wake_only), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK(!f.lock.held());
    CHECK(f.mock.done());
}

TEST(wake_release_falls_back_to_eval_on_noscript) {
    Fixture f;
    f.acquired();
    f.mock.expect(release0)
        .reply(noscript)
        .expect(wire::cmd({"EVAL", release_text, "2", "k", "{k}:wake", token0}))
        .reply(":1\r\n");
    CHECK_EQ(f.lock.release(wake_only), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

TEST(wake_release_refused_before_it_ran_is_retried) {
    Fixture f;
    f.acquired();
    f.mock.expect(release0)
        .reply("-NOREPLICAS Not enough good replicas to write.\r\n")
        .expect(release0)
        .reply(":1\r\n");
    CHECK_EQ(f.lock.release(wake_only), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK_EQ(f.mock.sleeps, 1U);
    CHECK(f.mock.done());
}

TEST(wake_release_answers_expired_not_owner_and_protocol_error) {
    struct Case {
        std::string_view reply;
        Status status;
        bool token_kept;
    };
    const Case cases[] = {
        {":0\r\n", Status::expired, false},
        {":-1\r\n", Status::not_owner, false},
        // The script touches KEY:wake too: a WRONGTYPE says nothing of who holds KEY.
        {"-WRONGTYPE Operation against a key holding the wrong kind\r\n", Status::wrong_type, true},
        {":2\r\n", Status::protocol_error, true},
        {"+OK\r\n", Status::protocol_error, true}};
    for (const Case& c : cases) {
        Fixture f;
        f.acquired();
        f.mock.expect(release0).reply(c.reply);
        CHECK_EQ(f.lock.release(wake_only), c.status);
        CHECK_EQ(!f.lock.token().empty(), c.token_kept);
        CHECK(!f.lock.held());
        CHECK(f.mock.done());
    }
}

TEST(wake_release_reply_lost_keeps_the_token_for_a_retry) {
    Fixture f(100);
    f.acquired();
    f.mock.expect(release0).recv_closed();
    CHECK_EQ(f.lock.release(wake_only), Status::unknown_outcome);
    CHECK(f.lock.token() == token0);
    CHECK(!f.lock.held());
    f.mock.on_connect().expect(release0).reply(":1\r\n");
    CHECK_EQ(f.lock.release(wake_only), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

TEST(wake_release_that_would_not_fit_sends_nothing_and_keeps_the_token) {
    const std::string_view eval = wire::cmd({"EVAL", release_text, "2", "k", "{k}:wake", token0});
    {
        Fixture f(2000, eval.size() - 1);
        REQUIRE_EQ(f.lock.adopt(token0), Status::ok);
        CHECK_EQ(f.lock.release(wake_only), Status::too_large);
        CHECK(f.lock.token() == token0);
        CHECK_EQ(f.mock.connects, 0U);
    }
    Fixture f(2000, eval.size());
    REQUIRE_EQ(f.lock.adopt(token0), Status::ok);
    f.mock.on_connect().expect(release0).reply(noscript).expect(eval).reply(":1\r\n");
    CHECK_EQ(f.lock.release(wake_only), Status::ok);
    CHECK(f.mock.done());
}

TEST(release_without_wake_is_the_plain_release) {
    Fixture f;
    f.acquired();
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", token0})).reply(":1\r\n");
    CHECK_EQ(f.lock.release(fence_only), Status::ok);
    CHECK(f.lock.token().empty());
    CHECK(f.mock.done());
}

// ---- owner label ----

namespace {
AcquireOptions owned(std::string_view label, bool fence = false) {
    AcquireOptions o = options(fence);
    o.owner = label;
    return o;
}
}  // namespace

TEST(owner_label_goes_before_the_random_token_in_the_plain_set) {
    Fixture f;
    f.mock.on_connect()
        .expect(
            wire::cmd({"SET", "k", "door-17:000102030405060708090a0b0c0d0e0f", "NX", "PX", "1000"}))
        .reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(1000, owned("door-17")), Status::ok);
    CHECK(f.lock.held());
    CHECK(f.lock.token() == "door-17:000102030405060708090a0b0c0d0e0f");
    // Owner checks compare the whole token.
    f.mock.expect(wire::cmd({"EVALSHA", owner_sha, "1", "k", f.lock.token()})).reply(":1\r\n");
    CHECK_EQ(f.lock.release(), Status::ok);
    CHECK(f.mock.done());
}

TEST(owner_label_busy_then_acquired_with_a_fresh_labelled_token_each_attempt) {
    Fixture f;
    f.constant_random();
    char token[8 + 32];
    std::memcpy(token, "a.b_c-9:", 8);
    std::memcpy(token + 8, zeros.data(), 32);
    const std::string_view labelled(token, sizeof token);
    const std::string_view set_labelled = wire::cmd({"SET", "k", labelled, "NX", "PX", "1000"});
    f.mock.on_connect()
        .expect(set_labelled)
        .reply("$-1\r\n")
        .expect(wire::cmd({"EVALSHA", owner_sha, "1", "k"}))
        .reply("*2\r\n$5\r\nother\r\n:2\r\n")
        .expect(set_labelled)
        .reply("+OK\r\n");
    CHECK_EQ(f.lock.try_acquire(1000, 5000, owned("a.b_c-9")), Status::ok);
    CHECK_EQ(f.mock.slept_ms, 2U);  // the holder's PTTL bounds the pause, as without a label
    CHECK(f.lock.token() == labelled);
    CHECK(f.mock.done());
}

TEST(owner_label_with_a_fence_goes_into_the_script) {
    Fixture f;
    f.mock.on_connect()
        .expect(wire::cmd({"EVALSHA", acquire_sha, "2", "k", "{k}:fence",
                           "dev:000102030405060708090a0b0c0d0e0f", "1000"}))
        .reply("$1\r\n4\r\n");
    std::uint64_t fence = 0;
    CHECK_EQ(f.lock.acquire(1000, owned("dev", true), &fence), Status::ok);
    CHECK_EQ(fence, 4U);
    CHECK(f.lock.token() == "dev:000102030405060708090a0b0c0d0e0f");
    CHECK(f.mock.done());
}

TEST(owner_labels_outside_the_charset_or_too_long_send_nothing) {
    Fixture f;
    char longest[resplock::max_owner_len + 1];
    std::memset(longest, 'x', sizeof longest);
    const std::string_view bad[] = {"two words", "a:b",
                                    "new\nline", "caf\xc3\xa9",
                                    "slash/",    std::string_view(longest, sizeof longest)};
    for (const std::string_view label : bad) {
        std::uint64_t fence = 0;
        CHECK_EQ(f.lock.acquire(1000, owned(label)), Status::invalid_argument);
        CHECK_EQ(f.lock.try_acquire(1000, 100, owned(label)), Status::invalid_argument);
        CHECK_EQ(f.lock.acquire(1000, owned(label, true), &fence), Status::invalid_argument);
    }
    CHECK_EQ(f.mock.connects, 0U);
    CHECK(f.lock.token().empty());
    // The longest valid label is accepted.
    char token[sizeof longest + 32];
    std::memcpy(token, longest, sizeof longest - 1);
    token[sizeof longest - 1] = ':';
    std::memcpy(token + sizeof longest, token0.data(), 32);
    f.mock.on_connect()
        .expect(wire::cmd({"SET", "k", {token, sizeof token}, "NX", "PX", "1000"}))
        .reply("+OK\r\n");
    CHECK_EQ(f.lock.acquire(1000, owned({longest, sizeof longest - 1})), Status::ok);
    CHECK(f.mock.done());
}
