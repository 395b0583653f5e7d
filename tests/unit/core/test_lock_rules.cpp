// The rules every lock kind shares (src/core/: validity, token, script, outcome, retry), tested
// directly over the mock port: Validity, random tokens, EVALSHA with EVAL as fallback, what the
// owner script's answer and a lost or unread reply mean, the size of a script request against
// the encoder's real bytes, and the wait-and-retry loop.
#include <cstring>

#include "../event_log.hpp"
#include "check.hpp"
#include "core/lua_scripts.hpp"
#include "core/outcome.hpp"
#include "core/retry.hpp"
#include "core/script.hpp"
#include "core/token.hpp"
#include "mock_connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/mock.hpp"
#include "wire.hpp"

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Deadline;
using resplock::Status;
using resplock::Validity;
using resplock::mock::MockPort;
using support::with_timeout;
namespace detail = resplock::detail;
namespace resp = resplock::resp;

namespace {

// A made-up script: eval() sends whatever it is given.
constexpr std::string_view sha = "0123456789abcdef0123456789abcdef01234567";
constexpr std::string_view text = "return redis.call('get',KEYS[1])";
constexpr detail::Script script = {sha, text};

struct Fixture : support::MockConnection<> {
    resp::Reply reply;

    using MockConnection::MockConnection;

    // One made-up request through the connection (the rules only look at how it ended).
    Status request() {
        static const std::string_view args[2] = {"GET", "k"};
        return conn.command(args, 2, reply);
    }
    // eval() of `script` with numkeys 1 and key "k", within the connection's timeout.
    Status eval(std::string_view (&args)[4]) {
        args[2] = "1";
        args[3] = "k";
        return detail::eval(conn, script, args, 4, reply, Deadline::after(port, config.timeout_ms));
    }
};

const std::string_view get_k = wire::cmd({"GET", "k"});
const std::string_view evalsha_k = wire::cmd({"EVALSHA", sha, "1", "k"});
const std::string_view eval_k = wire::cmd({"EVAL", text, "1", "k"});

}  // namespace

// ---- Validity ----

TEST(validity_is_the_ttl_less_drift_counted_from_the_send_time) {
    MockPort mock;
    const resplock_port_t port = mock.port();
    Validity v;
    CHECK(!v.known());
    CHECK_EQ(v.remaining(port), 0U);
    // Sent 300 ms ago with a TTL of 1000 ms: drift 1000/100 + 2 = 12 ms.
    v.start(mock.now_ms - 300, 1000);
    CHECK(v.known());
    CHECK_EQ(v.remaining(port), 688U);
    mock.advance(687);
    CHECK_EQ(v.remaining(port), 1U);
    mock.advance(1);
    CHECK_EQ(v.remaining(port), 0U);
    CHECK(v.known());  // granted, and run out since
}

TEST(validity_drift_is_a_hundredth_of_the_ttl_plus_2_ms) {
    MockPort mock;
    const resplock_port_t port = mock.port();
    struct Case {
        std::uint32_t ttl;
        std::uint32_t span;
    };
    const Case cases[] = {
        {3, 1},      {99, 97},       {100, 97},
        {1000, 988}, {30000, 29698}, {resplock::max_ttl_ms, resplock::max_ttl_ms - 21474836U - 2U}};
    for (const Case& c : cases) {
        Validity v;
        v.start(mock.now_ms, c.ttl);
        CHECK(v.known());
        CHECK_EQ(v.remaining(port), c.span);
    }
}

TEST(validity_of_a_ttl_within_the_drift_allowance_is_none) {
    MockPort mock;
    const resplock_port_t port = mock.port();
    for (const std::uint32_t ttl : {1U, 2U}) {
        Validity v;
        v.start(mock.now_ms, ttl);
        CHECK(!v.known());
        CHECK_EQ(v.remaining(port), 0U);
    }
}

TEST(validity_end_forgets_it_and_start_grants_it_again) {
    MockPort mock;
    const resplock_port_t port = mock.port();
    Validity v;
    v.start(mock.now_ms, 1000);
    v.end();
    CHECK(!v.known());
    CHECK_EQ(v.remaining(port), 0U);
    // A validity read as run out, then granted again, counts from the new start.
    v.start(mock.now_ms, 1000);
    mock.advance(2000);
    CHECK_EQ(v.remaining(port), 0U);
    v.start(mock.now_ms, 500);
    CHECK_EQ(v.remaining(port), 493U);
}

// The port clock is 32 bits of milliseconds: read as a signed difference, a validity 2^31 ms
// (24.8 days) past its end would look valid again.
TEST(validity_stays_run_out_when_the_clock_moves_on_by_2_31_ms) {
    for (const std::uint32_t later : {0x80000000U + 2000U, 0x80000000U + 1000U, 0xFFFFFF00U}) {
        MockPort mock;
        const resplock_port_t port = mock.port();
        Validity v;
        v.start(mock.now_ms, 1000);
        mock.advance(later);  // never read in between
        CHECK_EQ(v.remaining(port), 0U);
    }
    // Read as run out once, it stays so even when the clock comes round to the start again.
    MockPort mock;
    const resplock_port_t port = mock.port();
    const std::uint32_t start = mock.now_ms;
    Validity v;
    v.start(start, 1000);
    mock.advance(988);
    CHECK_EQ(v.remaining(port), 0U);
    mock.now_ms = start + 500U;  // the clock came round: 500 ms after the start, modulo 2^32
    CHECK_EQ(v.remaining(port), 0U);
}

TEST(validity_across_the_clock_wrap_counts_down_normally) {
    MockPort mock;
    mock.now_ms = 0xFFFFFF00U;  // 256 ms before the wrap
    const resplock_port_t port = mock.port();
    Validity v;
    v.start(mock.now_ms, 1000);
    mock.advance(500);  // past the wrap
    CHECK_EQ(v.remaining(port), 488U);
}

TEST(an_unconfirmed_renewal_keeps_the_earlier_of_the_old_and_the_new_end) {
    MockPort mock;
    const resplock_port_t port = mock.port();
    const std::uint32_t t0 = mock.now_ms;
    // A longer renewal that may not have run: the old end (t0 + 988) stands.
    Validity longer;
    longer.start(t0, 1000);
    longer.renewal_unconfirmed(t0 + 400, 5000);
    mock.advance(400);
    CHECK_EQ(longer.remaining(port), 588U);
    // A shorter renewal that may have run: its end (t0 + 400 + 295) comes first.
    Validity shorter;
    shorter.start(t0, 1000);
    shorter.renewal_unconfirmed(t0 + 400, 300);
    CHECK_EQ(shorter.remaining(port), 295U);
    // One within the drift allowance may have left the key with no usable time at all.
    Validity tiny;
    tiny.start(t0, 1000);
    tiny.renewal_unconfirmed(t0 + 400, 2);
    CHECK_EQ(tiny.remaining(port), 0U);
}

TEST(an_unconfirmed_renewal_claims_nothing_new) {
    MockPort mock;
    const resplock_port_t port = mock.port();
    const std::uint32_t t0 = mock.now_ms;
    // Sent after the old validity ran out: none is left.
    Validity late;
    late.start(t0, 1000);
    late.renewal_unconfirmed(t0 + 988, 1000);
    CHECK_EQ(late.remaining(port), 0U);
    mock.advance(1000);
    CHECK_EQ(late.remaining(port), 0U);
    // No validity known (never granted, or ended): an unconfirmed renewal grants none.
    mock.now_ms = t0;
    Validity never;
    never.renewal_unconfirmed(t0, 1000);
    CHECK(!never.known());
    CHECK_EQ(never.remaining(port), 0U);
    Validity ended;
    ended.start(t0, 1000);
    ended.end();
    ended.renewal_unconfirmed(t0, 1000);
    CHECK_EQ(ended.remaining(port), 0U);
}

// ---- random_token ----

TEST(random_token_spells_sixteen_random_bytes_in_lowercase_hex) {
    MockPort mock;
    mock.random_next = 0xa0;
    const resplock_port_t port = mock.port();
    char token[resplock::token_len];
    REQUIRE_EQ(detail::random_token(port, token), Status::ok);
    CHECK(std::string_view(token, sizeof token) == "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");
    CHECK_EQ(mock.random_next, 0xb0U);  // exactly RESPLOCK_TOKEN_BYTES bytes were drawn
    mock.random_next = 0xf8;
    REQUIRE_EQ(detail::random_token(port, token), Status::ok);
    CHECK(std::string_view(token, sizeof token) == "f8f9fafbfcfdfeff0001020304050607");
}

TEST(random_token_fails_without_a_working_random_source) {
    MockPort mock;
    mock.random_fails = true;
    resplock_port_t port = mock.port();
    char token[resplock::token_len];
    CHECK_EQ(detail::random_token(port, token), Status::random_failed);
    port.random = nullptr;
    CHECK_EQ(detail::random_token(port, token), Status::random_failed);
}

// ---- eval ----

TEST(eval_sends_evalsha_with_the_scripts_sha1) {
    Fixture f;
    f.mock.on_connect().expect(evalsha_k).reply("$1\r\nv\r\n");
    std::string_view args[4];
    CHECK_EQ(f.eval(args), Status::ok);
    CHECK(f.reply.top().equals("v"));
    CHECK(args[0] == "EVALSHA");
    CHECK(args[1] == sha);
    CHECK(f.mock.done());
}

TEST(eval_sends_the_text_once_after_noscript) {
    Fixture f;
    f.mock.on_connect()
        .expect(evalsha_k)
        .reply("-NOSCRIPT No matching script. Please use EVAL.\r\n")
        .expect(eval_k)
        .reply(":1\r\n");
    std::string_view args[4];
    CHECK_EQ(f.eval(args), Status::ok);
    CHECK_EQ(f.reply.top().integer, 1);
    CHECK(args[0] == "EVAL");
    CHECK(args[1] == text);
    CHECK(f.mock.done());
}

TEST(eval_falls_back_once_and_only_on_noscript) {
    // NOSCRIPT to EVAL too (a server that cannot load it): no third request.
    Fixture twice;
    twice.mock.on_connect()
        .expect(evalsha_k)
        .reply("-NOSCRIPT No matching script.\r\n")
        .expect(eval_k)
        .reply("-NOSCRIPT No matching script.\r\n");
    std::string_view args[4];
    CHECK_EQ(twice.eval(args), Status::no_script);
    CHECK(twice.mock.done());
    // Any other error reply is the answer.
    Fixture other;
    other.mock.on_connect().expect(evalsha_k).reply("-NOPERM this user has no permissions\r\n");
    CHECK_EQ(other.eval(args), Status::no_permission);
    CHECK(other.mock.done());
    // And so is a lost reply: the script may have run, the text is not sent.
    Fixture lost(with_timeout(100));
    lost.mock.on_connect().expect(evalsha_k).recv_closed();
    CHECK_EQ(lost.eval(args), Status::closed);
    CHECK(lost.mock.done());
}

TEST(eval_fallback_shares_the_callers_deadline) {
    Fixture f(with_timeout(100));
    f.mock.on_connect()
        .expect(evalsha_k)
        .recv_delay(70)
        .reply("-NOSCRIPT No matching script.\r\n")
        .expect(eval_k)
        .recv_timeout();
    const std::uint32_t start = f.mock.now_ms;
    std::string_view args[4];
    CHECK_EQ(f.eval(args), Status::timeout);
    CHECK_EQ(f.mock.now_ms - start, 100U);
    CHECK(f.mock.done());
}

// ---- outcome, may_have_run ----

TEST(outcome_is_unknown_only_when_the_request_went_out) {
    Fixture f(with_timeout(100));
    f.mock.on_connect().expect(get_k).recv_timeout();
    CHECK_EQ(f.request(), Status::timeout);
    CHECK_EQ(detail::outcome(f.conn, Status::timeout), Status::unknown_outcome);
    f.mock.on_connect().expect(get_k).recv_closed();
    CHECK_EQ(f.request(), Status::closed);
    CHECK_EQ(detail::outcome(f.conn, Status::closed), Status::unknown_outcome);
    f.mock.on_connect().expect(get_k).recv_error();
    CHECK_EQ(f.request(), Status::io_error);
    CHECK_EQ(detail::outcome(f.conn, Status::io_error), Status::unknown_outcome);
    // Statuses other than a lost reply are themselves.
    CHECK_EQ(detail::outcome(f.conn, Status::protocol_error), Status::protocol_error);
    CHECK_EQ(detail::outcome(f.conn, Status::server_error), Status::server_error);
    // Nothing went out: the connect failed, or the send did before its first byte.
    f.mock.on_connect(RESPLOCK_PORT_REFUSED);
    CHECK_EQ(f.request(), Status::connect_failed);
    CHECK_EQ(detail::outcome(f.conn, Status::connect_failed), Status::connect_failed);
    f.mock.on_connect().send_fail(RESPLOCK_PORT_CLOSED);
    CHECK_EQ(f.request(), Status::closed);
    CHECK_EQ(detail::outcome(f.conn, Status::closed), Status::closed);
    f.mock.on_connect().send_fail(0);
    CHECK_EQ(f.request(), Status::timeout);
    CHECK_EQ(detail::outcome(f.conn, Status::timeout), Status::timeout);
    CHECK(f.mock.done());
}

TEST(may_have_run_after_a_request_that_went_out_without_a_usable_answer) {
    Fixture f(with_timeout(100));
    // A lost reply, a malformed one, one too large for the buffer.
    f.mock.on_connect().expect(get_k).recv_timeout();
    Status s = detail::outcome(f.conn, f.request());
    CHECK_EQ(s, Status::unknown_outcome);
    CHECK(detail::may_have_run(f.conn, s, false));
    f.mock.on_connect().expect(get_k).reply("+OK\r\r");
    s = detail::outcome(f.conn, f.request());
    CHECK_EQ(s, Status::protocol_error);
    CHECK(detail::may_have_run(f.conn, s, false));
    // A simple string that fills the 512-byte buffer without its CR LF.
    static char huge[512];
    std::memset(huge, 'x', sizeof huge);
    huge[0] = '+';
    f.mock.on_connect().expect(get_k).reply({huge, sizeof huge});
    s = detail::outcome(f.conn, f.request());
    CHECK_EQ(s, Status::too_large);
    CHECK(detail::may_have_run(f.conn, s, false));
    // An error reply: a script may have stopped after a write; a plain command did nothing.
    f.mock.on_connect().expect(get_k).reply("-ERR something\r\n");
    s = detail::outcome(f.conn, f.request());
    CHECK_EQ(s, Status::server_error);
    CHECK(detail::may_have_run(f.conn, s, true));
    CHECK(!detail::may_have_run(f.conn, s, false));
    // LOADING, BUSY, CLUSTERDOWN, TRYAGAIN and NOREPLICAS refuse even a script before it writes.
    for (const char* refused :
         {"-LOADING Redis is loading the dataset in memory\r\n",
          "-BUSY Redis is busy running a script\r\n", "-CLUSTERDOWN The cluster is down\r\n",
          "-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
          "-NOREPLICAS Not enough good replicas to write. script: "
          "58a4486d0aceafc645a5dacb2b575167e2ec561a, on @user_script:1.\r\n"}) {
        f.mock.expect(get_k).reply(refused);
        s = detail::outcome(f.conn, f.request());
        CHECK(detail::refused_unrun(s));
        CHECK(!detail::may_have_run(f.conn, s, true));
    }
    // An answer is an answer.
    f.mock.expect(get_k).reply("$-1\r\n");
    s = f.request();
    CHECK_EQ(s, Status::ok);
    CHECK(!detail::may_have_run(f.conn, s, true));
    CHECK(f.mock.done());
}

TEST(may_have_run_never_when_nothing_went_out) {
    Fixture f;
    f.mock.on_connect(RESPLOCK_PORT_REFUSED);
    Status s = detail::outcome(f.conn, f.request());
    CHECK(!detail::may_have_run(f.conn, s, true));
    // A request too large for the buffer is refused before anything is sent.
    MockPort small_mock;
    const resplock_port_t small_port = small_mock.port();
    small_mock.on_connect();
    char small_buf[8];
    Connection small(small_port, f.config, small_buf, sizeof small_buf);
    resp::Reply reply;
    static const std::string_view args[2] = {"GET", "k"};
    s = small.command(args, 2, reply);
    CHECK_EQ(s, Status::too_large);
    CHECK(!small.request_sent());
    CHECK(!detail::may_have_run(small, s, true));
    // An error reply to the handshake (not to the request): the request never went out.
    ConnectionConfig c;
    c.db = 2;
    Fixture g(c);
    g.mock.on_connect().expect(wire::cmd({"SELECT", "2"})).reply("-ERR DB index out of range\r\n");
    s = detail::outcome(g.conn, g.request());
    CHECK_EQ(s, Status::server_error);
    CHECK(!detail::may_have_run(g.conn, s, true));
    CHECK(f.mock.done());
    CHECK(g.mock.done());
    CHECK(small_mock.done());
}

// ---- owner_answer ----

TEST(owner_answer_reads_the_owner_scripts_integer) {
    struct Case {
        std::string_view reply;
        Status status;
    };
    const Case cases[] = {{":1\r\n", Status::ok},
                          {":0\r\n", Status::expired},
                          {":-1\r\n", Status::not_owner},
                          {":2\r\n", Status::protocol_error},
                          {":-2\r\n", Status::protocol_error},
                          {"+OK\r\n", Status::protocol_error},
                          {"$1\r\n1\r\n", Status::protocol_error},
                          {"$-1\r\n", Status::protocol_error},
                          {"*1\r\n:1\r\n", Status::protocol_error}};
    Fixture f;
    f.mock.on_connect();
    for (const Case& c : cases) {
        f.mock.expect(get_k).reply(c.reply);
        const Status s = f.request();
        CHECK_EQ(s, Status::ok);
        CHECK_EQ(detail::owner_answer(f.conn, s, f.reply), c.status);
    }
    CHECK(f.mock.done());
}

TEST(owner_answer_wrongtype_is_not_owner_only_as_the_answer_to_the_request) {
    Fixture f;
    f.mock.on_connect().expect(get_k).reply(
        "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    Status s = f.request();
    CHECK_EQ(s, Status::wrong_type);
    CHECK_EQ(detail::owner_answer(f.conn, s, f.reply), Status::not_owner);
    // WRONGTYPE to the handshake's SELECT says nothing about the key: the request never went out.
    ConnectionConfig c;
    c.db = 2;
    Fixture g(c);
    g.mock.on_connect()
        .expect(wire::cmd({"SELECT", "2"}))
        .reply("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    s = g.request();
    CHECK_EQ(s, Status::wrong_type);
    CHECK_EQ(detail::owner_answer(g.conn, s, g.reply), Status::wrong_type);
    CHECK(f.mock.done());
    CHECK(g.mock.done());
}

TEST(owner_answer_of_a_lost_reply_is_unknown_outcome) {
    Fixture f(with_timeout(100));
    f.mock.on_connect().expect(get_k).recv_timeout();
    Status s = f.request();
    CHECK_EQ(detail::owner_answer(f.conn, s, f.reply), Status::unknown_outcome);
    f.mock.on_connect(RESPLOCK_PORT_REFUSED);
    s = f.request();
    CHECK_EQ(detail::owner_answer(f.conn, s, f.reply), Status::connect_failed);
    f.mock.on_connect().expect(get_k).reply("-READONLY You can't write against a replica.\r\n");
    s = f.request();
    CHECK_EQ(detail::owner_answer(f.conn, s, f.reply), Status::read_only);
    CHECK(f.mock.done());
}

// ---- eval_size, eval_fits ----

TEST(digits_and_bulk_size_count_resp_bytes) {
    CHECK_EQ(detail::digits(0), 1U);
    CHECK_EQ(detail::digits(9), 1U);
    CHECK_EQ(detail::digits(10), 2U);
    CHECK_EQ(detail::digits(99), 2U);
    CHECK_EQ(detail::digits(100), 3U);
    CHECK_EQ(detail::digits(65536), 5U);
    CHECK_EQ(detail::bulk_size(0), 6U);    // $0\r\n\r\n
    CHECK_EQ(detail::bulk_size(10), 17U);  // $10\r\n + 10 + \r\n
}

TEST(eval_size_is_the_length_of_the_encoded_eval_request) {
    static char text_bytes[1000];
    static char arg_bytes[1000];
    std::memset(text_bytes, 't', sizeof text_bytes);
    std::memset(arg_bytes, 'a', sizeof arg_bytes);
    // Lengths on each side of a digit boundary; argument counts giving 1- and 2-digit headers.
    const std::size_t lengths[] = {0, 1, 9, 10, 99, 100, 999};
    for (const std::size_t text_len : lengths) {
        for (const std::size_t arg_len : lengths) {
            for (const std::size_t count : {1U, 2U, 7U, 8U, 12U}) {
                std::string_view args[2 + 12] = {"EVAL", {text_bytes, text_len}};
                std::size_t arg_total = 0;
                for (std::size_t i = 0; i < count; ++i) {
                    // Arguments of several sizes: arg_len, then shorter ones.
                    args[2 + i] = {arg_bytes, arg_len / (i + 1)};
                    arg_total += detail::bulk_size(args[2 + i].size());
                }
                static char out[16 * 1024];
                std::size_t written = 0;
                REQUIRE_EQ(resp::encode_command(args, 2 + count, out, sizeof out, &written),
                           Status::ok);
                CHECK_EQ(detail::eval_size(text_len, count, arg_total), written);
            }
        }
    }
}

TEST(eval_fits_exactly_the_buffer_the_eval_form_needs) {
    static char key[RESPLOCK_MAX_KEY_LEN];
    std::memset(key, 'k', sizeof key);
    std::string_view args[6] = {{}, {}, "1", {key, sizeof key}, "tok", "2147483647"};
    std::size_t bytes = 0;
    for (std::size_t i = 2; i < 6; ++i)
        bytes += detail::bulk_size(args[i].size());
    const std::size_t need = detail::eval_size(detail::owner_script.text.size(), 4, bytes);
    MockPort mock;
    const resplock_port_t port = mock.port();
    static char buf[1024];
    Connection exact(port, {}, buf, need);
    Connection short_by_one(port, {}, buf, need - 1);
    CHECK(detail::eval_fits(exact, detail::owner_script, args, 6));
    CHECK(!detail::eval_fits(short_by_one, detail::owner_script, args, 6));
    // And the encoder agrees to the byte.
    args[0] = "EVAL";
    args[1] = detail::owner_script.text;
    std::size_t written = 0;
    CHECK_EQ(resp::encode_command(args, 6, buf, need, &written), Status::ok);
    CHECK_EQ(written, need);
    CHECK_EQ(resp::encode_command(args, 6, buf, need - 1, &written), Status::too_large);
    // The owner script's longest request (the extend, at the limits) is what lock_buffer_min()
    // gives.
    char token[resplock::max_token_len];
    std::memset(token, 't', sizeof token);
    args[4] = {token, sizeof token};
    bytes = 0;
    for (std::size_t i = 2; i < 6; ++i)
        bytes += detail::bulk_size(args[i].size());
    CHECK_EQ(detail::eval_size(detail::owner_script.text.size(), 4, bytes),
             resplock::lock_buffer_min());
}

// ---- retryable, retry ----

TEST(retryable_are_busy_and_the_statuses_that_show_nothing_ran) {
    for (int i = 0; i <= static_cast<int>(Status::no_replicas); ++i) {
        const auto s = static_cast<Status>(i);
        // not_replicated: the acquisition was given back; the others: nothing ran.
        const bool expected = s == Status::busy || s == Status::timeout || s == Status::closed ||
                              s == Status::io_error || s == Status::connect_failed ||
                              s == Status::loading || s == Status::server_busy ||
                              s == Status::try_again || s == Status::no_replicas ||
                              s == Status::too_many_redirects || s == Status::not_replicated;
        if (!CHECK_EQ(detail::retryable(s), expected)) check::print(s);
    }
}

namespace {

// A scripted acquirer for retry(): attempts return statuses[0..] (the last one repeats), the
// holder's PTTL comes from ttls[0..] (none: -1), and each pause is recorded and taken on the mock
// clock, late_ms late.
struct Attempts {
    MockPort& mock;
    const Status* statuses;
    std::size_t count;
    const std::int64_t* ttls = nullptr;
    std::uint32_t late_ms = 0;
    std::size_t attempts = 0;
    std::size_t ttl_reads = 0;
    std::uint32_t pauses[16] = {};
    std::size_t paused = 0;
    const resplock::Observer* observer = nullptr;  // of the connection retry() is given
    std::uint32_t busy_pause_ms = 0;               // non-zero: the acquirer's busy_pause()
    std::size_t handed_over_at = 0;                // non-zero: that pause reports a hand-over

    Status run(std::uint32_t wait_ms, bool with_ttl = true);
};

Status attempt(void* ctx) {
    auto& a = *static_cast<Attempts*>(ctx);
    const Status s = a.statuses[a.attempts < a.count ? a.attempts : a.count - 1];
    ++a.attempts;
    return s;
}
std::int64_t holder_ttl(void* ctx) {
    auto& a = *static_cast<Attempts*>(ctx);
    return a.ttls == nullptr ? std::int64_t{-1} : a.ttls[a.ttl_reads++];
}
std::uint32_t busy_pause(void* ctx) {
    return static_cast<Attempts*>(ctx)->busy_pause_ms;
}
Status pause(void* ctx, std::uint32_t ms, Deadline /*until*/) {
    auto& a = *static_cast<Attempts*>(ctx);
    if (a.paused < 16) a.pauses[a.paused++] = ms;
    a.mock.advance(ms + a.late_ms);
    return a.paused == a.handed_over_at ? Status::ok : Status::busy;
}

Status Attempts::run(std::uint32_t wait_ms, bool with_ttl) {
    const detail::Acquirer acquirer = {attempt, with_ttl ? holder_ttl : nullptr,
                                       busy_pause_ms != 0 ? busy_pause : nullptr, pause};
    // retry() takes its clock, its sleep and its observer from a connection (unused otherwise).
    ConnectionConfig config;
    config.observer = observer;
    char buf[16];
    const Connection conn(mock.port(), config, buf, sizeof buf);
    return detail::retry(conn, "job", wait_ms, acquirer, this);
}

}  // namespace

TEST(retry_with_no_wait_makes_one_attempt) {
    MockPort mock;
    const Status busy[] = {Status::busy};
    Attempts s{mock, busy, 1};
    const std::uint32_t start = mock.now_ms;
    CHECK_EQ(s.run(0), Status::busy);
    CHECK_EQ(s.attempts, 1U);
    CHECK_EQ(s.paused, 0U);
    CHECK_EQ(mock.now_ms, start);
}

TEST(retry_refuses_a_wait_over_the_longest_span) {
    MockPort mock;
    const Status busy[] = {Status::busy};
    Attempts s{mock, busy, 1};
    CHECK_EQ(s.run(resplock::max_ttl_ms + 1), Status::invalid_argument);
    CHECK_EQ(s.attempts, 0U);
}

TEST(retry_stops_at_a_status_that_is_not_retryable) {
    MockPort mock;
    const Status statuses[] = {Status::busy, Status::connect_failed, Status::unknown_outcome};
    Attempts s{mock, statuses, 3};
    CHECK_EQ(s.run(5000), Status::unknown_outcome);
    CHECK_EQ(s.attempts, 3U);
    CHECK_EQ(s.paused, 2U);
    const Status ok[] = {Status::loading, Status::server_busy, Status::ok};
    Attempts t{mock, ok, 3};
    CHECK_EQ(t.run(5000), Status::ok);
    CHECK_EQ(t.attempts, 3U);
}

TEST(retry_backs_off_exponentially_with_jitter_up_to_the_maximum) {
    // random 0 each time: pauses are backoff/2 (10, 20, 40, 80, 160, 250, 250 ms).
    MockPort mock;
    mock.random_step = 0;
    const Status busy[] = {Status::busy};
    Attempts s{mock, busy, 1};
    CHECK_EQ(s.run(5000, false), Status::busy);
    const std::uint32_t low[] = {5, 10, 20, 40, 80, 125, 125};
    for (std::size_t i = 0; i < 7; ++i)
        CHECK_EQ(s.pauses[i], low[i]);
    // random 255: pauses are the whole backoff.
    MockPort high_mock;
    high_mock.random_next = 255;
    high_mock.random_step = 0;
    Attempts h{high_mock, busy, 1};
    CHECK_EQ(h.run(1000, false), Status::busy);
    const std::uint32_t high[] = {10, 20, 40, 80, 160, 250, 250};
    for (std::size_t i = 0; i < 7; ++i)
        CHECK_EQ(h.pauses[i], high[i]);
    // random 128: backoff/2 + (backoff/2 * 128) / 255 (the quotient's ARMv6-M spelling too).
    MockPort mid_mock;
    mid_mock.random_next = 128;
    mid_mock.random_step = 0;
    Attempts m{mid_mock, busy, 1};
    CHECK_EQ(m.run(1000, false), Status::busy);
    const std::uint32_t mid[] = {7, 15, 30, 60, 120, 187, 187};
    for (std::size_t i = 0; i < 7; ++i)
        CHECK_EQ(m.pauses[i], mid[i]);
    // No random source: the whole backoff too.
    MockPort none;
    none.random_fails = true;
    Attempts n{none, busy, 1};
    CHECK_EQ(n.run(100, false), Status::busy);
    CHECK_EQ(n.pauses[0], 10U);
    CHECK_EQ(n.pauses[1], 20U);
}

TEST(retry_never_pauses_past_the_holders_ttl_nor_the_deadline) {
    MockPort mock;
    mock.random_next = 255;
    mock.random_step = 0;
    const Status statuses[] = {Status::busy, Status::busy, Status::busy, Status::busy,
                               Status::busy};
    // PTTL 3: pause 3 instead of 10; -2 (gone): no pause; -1 (unknown): the backoff.
    const std::int64_t ttls[] = {3, -2, -1, 1000};
    Attempts s{mock, statuses, 5, ttls};
    const std::uint32_t start = mock.now_ms;
    CHECK_EQ(s.run(50), Status::busy);
    CHECK_EQ(s.paused, 3U);
    CHECK_EQ(s.pauses[0], 3U);
    CHECK_EQ(s.pauses[1], 40U);  // backoff 40 after two doublings; no pause for the -2
    // Then the 7 ms left of the wait, then one attempt at the deadline.
    CHECK_EQ(s.pauses[2], 7U);
    CHECK_EQ(s.attempts, 5U);
    CHECK_EQ(mock.now_ms - start, 50U);
}

TEST(retry_takes_the_busy_pause_after_busy_and_the_backoff_after_anything_else) {
    MockPort mock;
    mock.random_next = 255;
    mock.random_step = 0;
    const Status statuses[] = {Status::busy, Status::loading, Status::busy};
    // The busy pause (30) replaces the backoff after busy, and the holder's PTTL still bounds it;
    // one PTTL for each busy attempt followed by a pause (the last attempt, at the deadline, has
    // none).
    const std::int64_t ttls[] = {-1, 12, -1, -1};
    Attempts s{mock, statuses, 3, ttls};
    s.busy_pause_ms = 30;
    const std::uint32_t start = mock.now_ms;
    CHECK_EQ(s.run(100), Status::busy);
    CHECK_EQ(s.paused, 5U);
    CHECK_EQ(s.pauses[0], 30U);  // busy, PTTL unknown
    CHECK_EQ(s.pauses[1], 20U);  // loading: the backoff, doubled once
    CHECK_EQ(s.pauses[2], 12U);  // busy, PTTL 12
    CHECK_EQ(s.pauses[3], 30U);
    CHECK_EQ(s.pauses[4], 8U);  // what is left of the wait
    CHECK_EQ(s.ttl_reads, 4U);
    CHECK_EQ(mock.now_ms - start, 100U);
}

TEST(retry_ends_with_ok_when_a_pause_reports_a_hand_over) {
    MockPort mock;
    const Status busy[] = {Status::busy};
    Attempts s{mock, busy, 1};
    s.handed_over_at = 2;
    CHECK_EQ(s.run(1000, false), Status::ok);
    CHECK_EQ(s.attempts, 2U);  // no attempt after the pause that handed the lock over
    CHECK_EQ(s.paused, 2U);
}

TEST(retry_reads_the_holders_ttl_only_after_a_busy_attempt) {
    MockPort mock;
    const Status statuses[] = {Status::connect_failed, Status::loading, Status::ok};
    const std::int64_t ttls[] = {-2, -2};
    Attempts s{mock, statuses, 3, ttls};
    CHECK_EQ(s.run(1000), Status::ok);
    CHECK_EQ(s.ttl_reads, 0U);
    CHECK_EQ(s.paused, 2U);
}

TEST(retry_makes_no_attempt_after_a_pause_that_ended_too_late) {
    const Status busy[] = {Status::busy};
    // Pauses end late_wake_ms late: still followed by an attempt (a sleep's usual tick).
    MockPort on_time;
    on_time.random_step = 0;
    Attempts a{on_time, busy, 1};
    a.late_ms = detail::late_wake_ms;
    const std::uint32_t start = on_time.now_ms;
    CHECK_EQ(a.run(12, false), Status::busy);
    // Pause 5 (ends at 10), pause 2 (the time left; ends at 17, 5 past the deadline): 3 attempts.
    CHECK_EQ(a.attempts, 3U);
    CHECK_EQ(on_time.now_ms - start, 17U);
    // One millisecond later than that: the wait ends without another attempt.
    MockPort late;
    late.random_step = 0;
    Attempts b{late, busy, 1};
    b.late_ms = detail::late_wake_ms + 1;
    CHECK_EQ(b.run(12, false), Status::busy);
    CHECK_EQ(b.attempts, 2U);
}

TEST(retry_reports_each_failed_attempt_that_is_followed_by_another) {
    MockPort mock;
    mock.random_step = 0;  // pauses of backoff/2
    support::EventLog log;
    const resplock::Observer observer(&support::EventLog::record, &log);
    const Status statuses[] = {Status::busy, Status::connect_failed, Status::busy, Status::ok};
    const std::int64_t ttls[] = {-2, 3};
    Attempts s{mock, statuses, 4, ttls};
    s.observer = &observer;
    CHECK_EQ(s.run(1000), Status::ok);
    CHECK_EQ(s.attempts, 4U);
    // Attempt 1 busy with the key gone (PTTL -2): at once; attempt 2 refused: backoff 20/2;
    // attempt 3 busy with PTTL 3: 3 ms. The successful 4th is no retry.
    if (!CHECK_EQ(log.count, 3U)) return;
    const Status want_status[] = {Status::busy, Status::connect_failed, Status::busy};
    const std::uint32_t want_ms[] = {0, 10, 3};
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK_EQ(log[i].kind, resplock::EventKind::retry);
        CHECK_EQ(log[i].status, want_status[i]);
        CHECK_EQ(log[i].number, static_cast<std::uint32_t>(i + 1));
        CHECK_EQ(log[i].ms, want_ms[i]);
        CHECK_EQ(log[i].key_view(), std::string_view("job"));
    }
}

TEST(retry_reports_nothing_when_the_wait_ends) {
    MockPort mock;
    mock.random_step = 0;
    support::EventLog log;
    const resplock::Observer observer(&support::EventLog::record, &log);
    const Status busy[] = {Status::busy};
    Attempts s{mock, busy, 1};
    s.observer = &observer;
    CHECK_EQ(s.run(0), Status::busy);  // one attempt, no pause: no retry
    CHECK_EQ(log.count, 0U);
    CHECK_EQ(s.run(12, false), Status::busy);  // pauses 5 and 7, then the last attempt
    if (!CHECK_EQ(log.count, 2U)) return;
    CHECK_EQ(log[0].ms, 5U);
    CHECK_EQ(log[1].ms, 7U);
    CHECK_EQ(log[1].number, 2U);
}

// ---- retry_release ----

namespace {

// A scripted release for retry_release(): attempts return statuses[0..] (the last one repeats),
// each taking cost_ms on the mock clock; records when each started and the deadline it was given.
struct Releases {
    MockPort& mock;
    const Status* statuses;
    std::size_t count;
    std::uint32_t cost_ms = 0;
    std::size_t attempts = 0;
    std::uint32_t started[64] = {};
    Deadline until[64] = {};

    Status operator()(Deadline deadline) {
        if (attempts < 64) {
            started[attempts] = mock.now_ms;
            until[attempts] = deadline;
        }
        mock.advance(cost_ms);
        return statuses[attempts++ < count ? attempts - 1 : count - 1];
    }
    Status run(std::uint32_t timeout_ms, const resplock::Observer* observer = nullptr) {
        ConnectionConfig config = with_timeout(timeout_ms);
        config.observer = observer;
        char buf[16];
        const Connection conn(mock.port(), config, buf, sizeof buf);
        return detail::retry_release(conn, "job", *this);
    }
};

}  // namespace

TEST(retry_release_repeats_only_a_release_the_server_refused_before_running_it) {
    MockPort mock;
    const Status statuses[] = {Status::try_again,
                               Status::loading,
                               Status::server_busy,
                               Status::no_replicas,
                               Status::too_many_redirects,
                               Status::connect_failed,
                               Status::timeout,
                               Status::ok};
    Releases r{mock, statuses, 8};
    const std::uint32_t start = mock.now_ms;
    CHECK_EQ(r.run(2000), Status::ok);
    CHECK_EQ(r.attempts, 8U);
    CHECK(mock.sleeps >= 7U);  // the backoff between the attempts
    // One deadline for every attempt's request: the connection's timeout from the start.
    for (std::size_t i = 0; i < r.attempts; ++i)
        CHECK_EQ(r.until[i].at_ms, start + 2000U);
}

TEST(retry_release_never_repeats_a_release_that_may_have_run_or_was_answered) {
    for (const Status s : {Status::ok, Status::not_owner, Status::expired, Status::unknown_outcome,
                           Status::protocol_error, Status::too_large, Status::server_error,
                           Status::no_permission, Status::read_only, Status::invalid_argument}) {
        MockPort mock;
        const Status statuses[] = {s, Status::ok};
        Releases r{mock, statuses, 2};
        CHECK_EQ(r.run(2000), s);
        if (!CHECK_EQ(r.attempts, 1U)) check::print(s);
        CHECK_EQ(mock.sleeps, 0U);
    }
}

TEST(retry_release_ends_within_the_connections_timeout) {
    // Refused every time: attempts start only in the first half of the timeout (a pause may end
    // late_wake_ms after it), and each request's deadline is the end of the whole timeout.
    for (const std::uint32_t cost : {0U, 30U, 199U}) {
        MockPort mock;
        const Status refused[] = {Status::try_again};
        Releases r{mock, refused, 1, cost};
        const std::uint32_t start = mock.now_ms;
        CHECK_EQ(r.run(1000), Status::try_again);
        CHECK(r.attempts >= 2U);
        for (std::size_t i = 0; i < r.attempts; ++i) {
            CHECK(r.started[i] - start <= 500U + detail::late_wake_ms);
            CHECK_EQ(r.until[i].at_ms, start + 1000U);
        }
        CHECK(mock.now_ms - start <= 1000U);
    }
    // A timeout of 0 or 1 ms: one attempt, and no pause.
    for (const std::uint32_t timeout : {0U, 1U}) {
        MockPort mock;
        const Status refused[] = {Status::loading};
        Releases r{mock, refused, 1};
        CHECK_EQ(r.run(timeout), Status::loading);
        CHECK_EQ(r.attempts, 1U);
        CHECK_EQ(mock.sleeps, 0U);
    }
}

TEST(retry_release_reports_its_retries) {
    MockPort mock;
    mock.random_step = 0;  // pauses of backoff/2
    support::EventLog log;
    const resplock::Observer observer(&support::EventLog::record, &log);
    const Status statuses[] = {Status::try_again, Status::no_replicas, Status::ok};
    Releases r{mock, statuses, 3};
    CHECK_EQ(r.run(2000, &observer), Status::ok);
    if (!CHECK_EQ(log.count, 2U)) return;
    CHECK_EQ(log[0].kind, resplock::EventKind::retry);
    CHECK_EQ(log[0].status, Status::try_again);
    CHECK_EQ(log[0].number, 1U);
    CHECK_EQ(log[0].ms, 5U);
    CHECK_EQ(log[1].status, Status::no_replicas);
    CHECK_EQ(log[1].number, 2U);
    CHECK_EQ(log[1].ms, 10U);
    CHECK_EQ(log[1].key_view(), std::string_view("job"));
}
