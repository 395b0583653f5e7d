// Unit tests of the RESP2 codec: every reply type, every way of splitting it, every malformed
// class, and the command encoder.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "check.hpp"
#include "resplock/core/resp.hpp"

using namespace std::literals;
using resplock::Status;
using resplock::resp::encode_command;
using resplock::resp::format_decimal;
using resplock::resp::Parser;
using resplock::resp::Reply;
using resplock::resp::Type;
using resplock::resp::Value;

namespace {

constexpr std::size_t kMaxValues = 16;
constexpr std::size_t kScratchSize = 512;

// Every parse in these tests happens in this buffer, so that the views of two runs can be
// compared by offset. Bytes that have not "arrived" yet hold CR LF, so a parser reading past
// `len` would see a line end and answer differently.
char scratch[kScratchSize];

void poison_scratch() {
    for (std::size_t i = 0; i < kScratchSize; ++i)
        scratch[i] = (i % 2 == 0) ? '\r' : '\n';
}

struct Expected {
    Type type;
    std::string_view text;  // payload, or an integer's digits
    std::int64_t integer;
    std::uint32_t size;  // element count of an array, else text.size()
};

constexpr Expected simple(std::string_view s) {
    return {Type::simple_string, s, 0, static_cast<std::uint32_t>(s.size())};
}
constexpr Expected error(std::string_view s) {
    return {Type::error, s, 0, static_cast<std::uint32_t>(s.size())};
}
constexpr Expected integer(std::string_view digits, std::int64_t v) {
    return {Type::integer, digits, v, static_cast<std::uint32_t>(digits.size())};
}
constexpr Expected bulk(std::string_view s) {
    return {Type::bulk_string, s, 0, static_cast<std::uint32_t>(s.size())};
}
constexpr Expected array(std::uint32_t n) {
    return {Type::array, {}, 0, n};
}
constexpr Expected nil_bulk() {
    return {Type::nil_bulk, {}, 0, 0};
}
constexpr Expected nil_array() {
    return {Type::nil_array, {}, 0, 0};
}

struct Case {
    const char* name;
    std::string_view wire;
    std::size_t count;
    Expected values[10];
};

// The reply suite. Each wire string is exactly one reply.
const Case kCases[] = {
    {"simple", "+OK\r\n"sv, 1, {simple("OK")}},
    {"empty simple", "+\r\n"sv, 1, {simple("")}},
    {"simple with spaces", "+QUEUED now\r\n"sv, 1, {simple("QUEUED now")}},
    {"error", "-ERR unknown command 'FOO'\r\n"sv, 1, {error("ERR unknown command 'FOO'")}},
    {"empty error", "-\r\n"sv, 1, {error("")}},
    {"zero", ":0\r\n"sv, 1, {integer("0", 0)}},
    {"positive", ":1000\r\n"sv, 1, {integer("1000", 1000)}},
    {"negative", ":-1\r\n"sv, 1, {integer("-1", -1)}},
    {"int64 max", ":9223372036854775807\r\n"sv, 1, {integer("9223372036854775807", INT64_MAX)}},
    {"int64 min", ":-9223372036854775808\r\n"sv, 1, {integer("-9223372036854775808", INT64_MIN)}},
    {"bulk", "$3\r\nfoo\r\n"sv, 1, {bulk("foo")}},
    {"empty bulk", "$0\r\n\r\n"sv, 1, {bulk("")}},
    {"binary bulk", "$8\r\na\r\nb\0c\r\n\r\n"sv, 1, {bulk("a\r\nb\0c\r\n"sv)}},
    {"bulk that looks like a reply", "$5\r\n*1\r\n:\r\n"sv, 1, {bulk("*1\r\n:")}},
    {"nil bulk", "$-1\r\n"sv, 1, {nil_bulk()}},
    {"nil array", "*-1\r\n"sv, 1, {nil_array()}},
    {"empty array", "*0\r\n"sv, 1, {array(0)}},
    {"flat array",
     "*3\r\n$3\r\nfoo\r\n:42\r\n$-1\r\n"sv,
     4,
     {array(3), bulk("foo"), integer("42", 42), nil_bulk()}},
    {"nested arrays",
     "*3\r\n*2\r\n:1\r\n$-1\r\n*0\r\n+x\r\n"sv,
     6,
     {array(3), array(2), integer("1", 1), nil_bulk(), array(0), simple("x")}},
    {"nested to nil array",
     "*1\r\n*1\r\n*1\r\n*-1\r\n"sv,
     4,
     {array(1), array(1), array(1), nil_array()}},
    {"array ending in an array",
     "*2\r\n+a\r\n*2\r\n-E\r\n$0\r\n\r\n"sv,
     5,
     {array(2), simple("a"), array(2), error("E"), bulk("")}},
    {"deepest nesting",
     "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:7\r\n"sv,
     9,
     {array(1), array(1), array(1), array(1), array(1), array(1), array(1), array(1),
      integer("7", 7)}},
};

struct Outcome {
    Status status = Status::incomplete;
    std::size_t consumed = 0;
    std::size_t count = 0;
    std::size_t decided_at = 0;  // buffer length at which the parser stopped saying incomplete
    bool consumed_within_len = true;
    Value values[kMaxValues] = {};
};

// Feeds `wire` to a fresh parser as if it arrived in pieces: the first call sees `first` bytes,
// each later call `step` more, until all have arrived.
Outcome feed(std::string_view wire, std::size_t first, std::size_t step,
             std::size_t capacity = kMaxValues) {
    Outcome out;
    poison_scratch();
    Parser parser(out.values, capacity);
    std::size_t len = 0;
    std::size_t next = first;
    while (true) {
        if (next > wire.size()) next = wire.size();
        std::memcpy(scratch + len, wire.data() + len, next - len);
        len = next;
        out.status = parser.parse(scratch, len);
        if (parser.consumed() > len) out.consumed_within_len = false;
        if (out.status != Status::incomplete && out.decided_at == 0) out.decided_at = len;
        if (len == wire.size()) break;
        next = len + step;
    }
    out.consumed = parser.consumed();
    out.count = parser.reply().count;
    return out;
}

Outcome feed_whole(std::string_view wire, std::size_t capacity = kMaxValues) {
    return feed(wire, wire.size(), 1, capacity);
}
Outcome feed_bytewise(std::string_view wire, std::size_t capacity = kMaxValues) {
    return feed(wire, 1, 1, capacity);
}

std::ptrdiff_t offset_of(const char* p) {
    return p == nullptr ? -1 : p - scratch;
}

// True when two runs gave the same result, views included; reports the first difference.
bool same_outcome(const Outcome& a, const Outcome& b) {
    bool same = CHECK_EQ(a.status, b.status) && CHECK_EQ(a.consumed, b.consumed) &&
                CHECK_EQ(a.count, b.count);
    for (std::size_t i = 0; same && i < a.count && i < kMaxValues; ++i) {
        same = CHECK_EQ(a.values[i].type, b.values[i].type) &&
               CHECK_EQ(a.values[i].size, b.values[i].size) &&
               CHECK_EQ(offset_of(a.values[i].data), offset_of(b.values[i].data)) &&
               CHECK_EQ(a.values[i].integer, b.values[i].integer);
    }
    return same;
}

void name_case(const char* name) {
    std::printf("      case: %s\n", name);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Well-formed replies

TEST(every_reply_parses_whole_to_its_expected_values) {
    for (const Case& c : kCases) {
        const Outcome o = feed_whole(c.wire);
        bool good = CHECK_EQ(o.status, Status::ok) && CHECK_EQ(o.consumed, c.wire.size()) &&
                    CHECK_EQ(o.count, c.count);
        for (std::size_t i = 0; good && i < c.count; ++i) {
            const Value& v = o.values[i];
            const Expected& e = c.values[i];
            good = CHECK_EQ(v.type, e.type) && CHECK_EQ(v.size, e.size) &&
                   CHECK_EQ(v.integer, e.integer);
            if (good &&
                (e.type == Type::array || e.type == Type::nil_bulk || e.type == Type::nil_array)) {
                good = CHECK(v.data == nullptr);
            } else if (good) {
                // The view lies inside the reply and holds the expected bytes.
                good = CHECK(v.data >= scratch) && CHECK(v.data + v.size <= scratch + o.consumed) &&
                       CHECK_EQ(v.text(), e.text);
            }
        }
        if (!good) name_case(c.name);
    }
}

TEST(every_reply_split_in_two_at_every_position_gives_the_same_result) {
    for (const Case& c : kCases) {
        const Outcome whole = feed_whole(c.wire);
        for (std::size_t k = 1; k < c.wire.size(); ++k) {
            const Outcome split = feed(c.wire, k, c.wire.size());
            // The first call saw a strict prefix and so must have said incomplete.
            if (!CHECK_EQ(split.decided_at, c.wire.size()) || !same_outcome(whole, split)) {
                name_case(c.name);
                std::printf("      split at %lu\n", static_cast<unsigned long>(k));
                break;
            }
        }
    }
}

TEST(every_reply_fed_one_byte_at_a_time_gives_the_same_result) {
    for (const Case& c : kCases) {
        const Outcome whole = feed_whole(c.wire);
        const Outcome bytewise = feed_bytewise(c.wire);
        if (!CHECK_EQ(bytewise.decided_at, c.wire.size()) || !same_outcome(whole, bytewise)) {
            name_case(c.name);
        }
    }
}

TEST(consumed_never_exceeds_len) {
    for (const Case& c : kCases) {
        for (std::size_t k = 1; k <= c.wire.size(); ++k) {
            if (!CHECK(feed(c.wire, k, 1).consumed_within_len)) {
                name_case(c.name);
                break;
            }
        }
    }
}

TEST(nil_bulk_and_nil_array_are_their_own_types) {
    Value values[2];
    Parser parser(values, 2);
    const char nil_bulk_wire[] = "$-1\r\n";
    REQUIRE_EQ(parser.parse(nil_bulk_wire, 5), Status::ok);
    CHECK_EQ(values[0].type, Type::nil_bulk);
    CHECK(values[0].data == nullptr);
    CHECK_EQ(values[0].size, 0u);

    parser.reset();
    const char nil_array_wire[] = "*-1\r\n";
    REQUIRE_EQ(parser.parse(nil_array_wire, 5), Status::ok);
    CHECK_EQ(values[0].type, Type::nil_array);
    CHECK(values[0].data == nullptr);
    CHECK_EQ(parser.reply().count, 1u);
}

TEST(binary_bulk_payload_keeps_cr_lf_and_nul) {
    constexpr std::string_view wire = "$6\r\n\r\n\0\r\n\0\r\n"sv;
    Value values[1];
    Parser parser(values, 1);
    REQUIRE_EQ(parser.parse(wire.data(), wire.size()), Status::ok);
    CHECK_EQ(parser.consumed(), wire.size());
    CHECK_EQ(values[0].type, Type::bulk_string);
    CHECK_EQ(values[0].text(), "\r\n\0\r\n\0"sv);
    CHECK(values[0].data == wire.data() + 4);
}

TEST(extra_bytes_after_a_reply_are_not_consumed) {
    constexpr std::string_view wire = "+OK\r\n:12\r\n$1"sv;
    Value values[2];
    Parser parser(values, 2);
    REQUIRE_EQ(parser.parse(wire.data(), wire.size()), Status::ok);
    CHECK_EQ(parser.consumed(), 5u);
    CHECK(values[0].equals("OK"));

    const std::string_view rest = wire.substr(parser.consumed());
    parser.reset();
    REQUIRE_EQ(parser.parse(rest.data(), rest.size()), Status::ok);
    CHECK_EQ(parser.consumed(), 5u);
    CHECK_EQ(values[0].integer, 12);
}

TEST(result_is_sticky_until_reset) {
    Value values[2];
    Parser parser(values, 2);
    const char ok_wire[] = ":5\r\n+more\r\n";
    REQUIRE_EQ(parser.parse(ok_wire, 4), Status::ok);
    CHECK_EQ(parser.parse(ok_wire, sizeof ok_wire - 1), Status::ok);
    CHECK_EQ(parser.consumed(), 4u);
    CHECK_EQ(values[0].integer, 5);

    parser.reset();
    const char bad_wire[] = "!\r\n";
    REQUIRE_EQ(parser.parse(bad_wire, 3), Status::protocol_error);
    CHECK_EQ(parser.parse(ok_wire, 4), Status::protocol_error);

    parser.reset();
    CHECK_EQ(parser.parse(ok_wire, 4), Status::ok);
    CHECK_EQ(values[0].integer, 5);
}

TEST(empty_input_is_incomplete) {
    Value values[1];
    Parser parser(values, 1);
    CHECK_EQ(parser.parse(nullptr, 0), Status::incomplete);
    CHECK_EQ(parser.reply().count, 0u);
}

TEST(a_header_line_is_not_rescanned_when_more_bytes_arrive) {
    // Bytes already searched for CR are not searched again: here they are (contrary to the
    // contract) changed to CR LF after the first call, which only a rescanning parser notices.
    char buf[] = "+AAAAAAAA\r\n";
    Value values[1];
    Parser parser(values, 1);
    REQUIRE_EQ(parser.parse(buf, 9), Status::incomplete);
    buf[3] = '\r';
    buf[4] = '\n';
    REQUIRE_EQ(parser.parse(buf, 11), Status::ok);
    CHECK_EQ(values[0].size, 8u);
    CHECK_EQ(parser.consumed(), 11u);
}

TEST(a_long_line_fed_one_byte_at_a_time_parses) {
    static char buf[4096];
    buf[0] = '+';
    std::memset(buf + 1, 'x', sizeof buf - 3);
    buf[sizeof buf - 2] = '\r';
    buf[sizeof buf - 1] = '\n';
    Value values[1];
    Parser parser(values, 1);
    Status s = Status::incomplete;
    std::size_t len = 0;
    while (s == Status::incomplete && len < sizeof buf)
        s = parser.parse(buf, ++len);
    CHECK_EQ(s, Status::ok);
    CHECK_EQ(len, sizeof buf);
    CHECK_EQ(values[0].size, sizeof buf - 3);
}

TEST(deepest_allowed_nesting_parses) {
    char wire[4 * RESPLOCK_MAX_DEPTH + 4];
    std::size_t n = 0;
    for (int i = 0; i < RESPLOCK_MAX_DEPTH; ++i, n += 4)
        std::memcpy(wire + n, "*1\r\n", 4);
    std::memcpy(wire + n, ":1\r\n", 4);
    n += 4;
    Value values[RESPLOCK_MAX_DEPTH + 1];
    Parser parser(values, RESPLOCK_MAX_DEPTH + 1);
    CHECK_EQ(parser.parse(wire, n), Status::ok);
    CHECK_EQ(parser.reply().count, std::size_t{RESPLOCK_MAX_DEPTH + 1});
    CHECK_EQ(values[RESPLOCK_MAX_DEPTH].type, Type::integer);
}

TEST(largest_allowed_array_parses) {
    char wire[16 + 4 * RESPLOCK_MAX_ARRAY_ELEMENTS];
    std::size_t n = static_cast<std::size_t>(
        std::snprintf(wire, sizeof wire, "*%d\r\n", RESPLOCK_MAX_ARRAY_ELEMENTS));
    for (int i = 0; i < RESPLOCK_MAX_ARRAY_ELEMENTS; ++i, n += 4)
        std::memcpy(wire + n, ":1\r\n", 4);
    Value values[RESPLOCK_MAX_ARRAY_ELEMENTS + 1];
    Parser parser(values, RESPLOCK_MAX_ARRAY_ELEMENTS + 1);
    CHECK_EQ(parser.parse(wire, n), Status::ok);
    CHECK_EQ(parser.consumed(), n);
    CHECK_EQ(values[0].size, std::uint32_t{RESPLOCK_MAX_ARRAY_ELEMENTS});
}

TEST(largest_allowed_bulk_length_is_accepted) {
    char wire[32];
    const int n = std::snprintf(wire, sizeof wire, "$%d\r\n", RESPLOCK_MAX_BULK_LEN);
    Value values[1];
    Parser parser(values, 1);
    // Accepted: the parser now waits for the payload.
    CHECK_EQ(parser.parse(wire, static_cast<std::size_t>(n)), Status::incomplete);
}

TEST(value_equals_compares_string_payloads_only) {
    const char wire[] = "*5\r\n+OK\r\n-ERR x\r\n$3\r\nfoo\r\n:1\r\n$0\r\n\r\n";
    Value values[6];
    Parser parser(values, 6);
    REQUIRE_EQ(parser.parse(wire, sizeof wire - 1), Status::ok);
    CHECK(values[1].equals("OK"));
    CHECK(!values[1].equals("OK "));
    CHECK(!values[1].equals("Ok"));
    CHECK(values[2].equals("ERR x"));
    CHECK(values[3].equals("foo"));
    CHECK(!values[3].equals("fo"));
    CHECK(!values[3].equals("fop"));
    CHECK(!values[4].equals("1"));  // an integer is not a string
    CHECK(values[5].equals(""));
    CHECK(!values[0].equals(""));  // nor is an array
    CHECK(values[5].is(Type::bulk_string));
}

// ---------------------------------------------------------------------------------------------
// Malformed replies: each class gives its exact status, whether the bytes arrive at once or one
// at a time.

namespace {

bool rejects(std::string_view wire, Status expected, std::size_t capacity = kMaxValues) {
    const bool whole = CHECK_EQ(feed_whole(wire, capacity).status, expected);
    const bool bytewise = CHECK_EQ(feed_bytewise(wire, capacity).status, expected);
    if (!(whole && bytewise)) {
        std::printf("      wire: ");
        check::print(wire);
        std::printf("\n");
    }
    return whole && bytewise;
}

}  // namespace

TEST(unknown_type_bytes_are_protocol_errors) {
    // RESP3 types, plain text, and bytes that are not a type at all.
    const char bytes[] = "_,#(=%~>|!0 \r\nHx";
    for (std::size_t i = 0; i < sizeof bytes - 1; ++i) {
        const char wire[] = {bytes[i], '1', '\r', '\n'};
        rejects({wire, 4}, Status::protocol_error);
    }
    rejects("\0\r\n"sv, Status::protocol_error);
    // Detected from the first byte, without waiting for a line end.
    Value values[1];
    Parser parser(values, 1);
    CHECK_EQ(parser.parse(">", 1), Status::protocol_error);
}

TEST(unknown_type_byte_inside_an_array_is_a_protocol_error) {
    rejects("*2\r\n:1\r\n%1\r\n"sv, Status::protocol_error);
}

TEST(non_digit_numbers_are_protocol_errors) {
    rejects(":12a\r\n"sv, Status::protocol_error);
    rejects(":1 \r\n"sv, Status::protocol_error);
    rejects(": 1\r\n"sv, Status::protocol_error);
    rejects("$x\r\n"sv, Status::protocol_error);
    rejects("*1a\r\n"sv, Status::protocol_error);
    rejects(":1.5\r\n"sv, Status::protocol_error);
    // The bytes either side of '0'..'9'.
    rejects(":1:\r\n"sv, Status::protocol_error);
    rejects(":/1\r\n"sv, Status::protocol_error);
}

TEST(empty_numbers_are_protocol_errors) {
    rejects(":\r\n"sv, Status::protocol_error);
    rejects(":-\r\n"sv, Status::protocol_error);
    rejects("$\r\n"sv, Status::protocol_error);
    rejects("*\r\n"sv, Status::protocol_error);
    rejects("$-\r\n"sv, Status::protocol_error);
}

TEST(leading_plus_sign_is_a_protocol_error) {
    rejects(":+1\r\n"sv, Status::protocol_error);
    rejects("$+3\r\nfoo\r\n"sv, Status::protocol_error);
    rejects("*+1\r\n:1\r\n"sv, Status::protocol_error);
}

TEST(twenty_digit_numbers_are_protocol_errors) {
    rejects(":10000000000000000000\r\n"sv, Status::protocol_error);
    rejects(":00000000000000000001\r\n"sv, Status::protocol_error);
    rejects(":-00000000000000000001\r\n"sv, Status::protocol_error);
    rejects("$00000000000000000003\r\nfoo\r\n"sv, Status::protocol_error);
    rejects("*00000000000000000001\r\n:1\r\n"sv, Status::protocol_error);
}

TEST(integer_overflow_is_a_protocol_error) {
    rejects(":9223372036854775808\r\n"sv, Status::protocol_error);
    rejects(":-9223372036854775809\r\n"sv, Status::protocol_error);
    rejects(":9999999999999999999\r\n"sv, Status::protocol_error);
    rejects(":18446744073709551616\r\n"sv, Status::protocol_error);
}

TEST(length_overflow_is_a_protocol_error) {
    rejects("$9223372036854775808\r\n"sv, Status::protocol_error);
    rejects("*9223372036854775808\r\n"sv, Status::protocol_error);
}

TEST(negative_lengths_other_than_minus_one_are_protocol_errors) {
    rejects("$-2\r\n"sv, Status::protocol_error);
    rejects("*-2\r\n"sv, Status::protocol_error);
    rejects("$-0\r\n"sv, Status::protocol_error);
    rejects("*-0\r\n"sv, Status::protocol_error);
    rejects("$-01\r\n"sv, Status::protocol_error);
    rejects("*-9223372036854775808\r\n"sv, Status::protocol_error);
}

TEST(cr_not_followed_by_lf_is_a_protocol_error) {
    rejects("+OK\rX"sv, Status::protocol_error);
    rejects("+OK\r\r\n"sv, Status::protocol_error);
    rejects(":1\r1\r\n"sv, Status::protocol_error);
    rejects("$3\r\rfoo\r\n"sv, Status::protocol_error);
    rejects("*1\r:1\r\n"sv, Status::protocol_error);
}

TEST(bulk_payload_without_cr_lf_is_a_protocol_error) {
    rejects("$3\r\nfoo\n"sv, Status::protocol_error);
    rejects("$3\r\nfooXY"sv, Status::protocol_error);
    rejects("$3\r\nfoo\rX"sv, Status::protocol_error);
    rejects("$3\r\nfoobar\r\n"sv, Status::protocol_error);
    rejects("$0\r\nX\r\n"sv, Status::protocol_error);
    // A wrong byte where CR belongs is reported without waiting for the next one.
    Value values[1];
    Parser parser(values, 1);
    CHECK_EQ(parser.parse("$3\r\nfooX", 8), Status::protocol_error);
}

TEST(bulk_length_over_the_limit_is_too_large) {
    char wire[32];
    const int n = std::snprintf(wire, sizeof wire, "$%d\r\n", RESPLOCK_MAX_BULK_LEN + 1);
    rejects({wire, static_cast<std::size_t>(n)}, Status::too_large);
    rejects("$4294967296\r\n"sv, Status::too_large);
}

TEST(array_count_over_the_limit_is_too_large) {
    char wire[32];
    const int n = std::snprintf(wire, sizeof wire, "*%d\r\n", RESPLOCK_MAX_ARRAY_ELEMENTS + 1);
    rejects({wire, static_cast<std::size_t>(n)}, Status::too_large);
}

TEST(huge_array_count_is_rejected_without_using_it) {
    rejects("*4294967295\r\n"sv, Status::too_large);
    rejects("*9223372036854775807\r\n"sv, Status::too_large);
}

TEST(nesting_deeper_than_the_limit_is_too_large) {
    char wire[4 * (RESPLOCK_MAX_DEPTH + 1) + 4];
    std::size_t n = 0;
    for (int i = 0; i < RESPLOCK_MAX_DEPTH + 1; ++i, n += 4)
        std::memcpy(wire + n, "*1\r\n", 4);
    std::memcpy(wire + n, ":1\r\n", 4);
    n += 4;
    rejects({wire, n}, Status::too_large);
    // An empty array one level too deep counts as nesting too.
    std::memcpy(wire + 4 * RESPLOCK_MAX_DEPTH, "*0\r\n", 4);
    rejects({wire, 4 * (RESPLOCK_MAX_DEPTH + 1)}, Status::too_large);
}

TEST(more_values_than_capacity_is_too_large) {
    rejects("*2\r\n:1\r\n:2\r\n"sv, Status::too_large, 2);
    rejects("*1\r\n*1\r\n$3\r\nabc\r\n"sv, Status::too_large, 2);
    rejects("+OK\r\n"sv, Status::too_large, 0);
    // The boundary: exactly enough room.
    CHECK_EQ(feed_whole("*2\r\n:1\r\n:2\r\n"sv, 3).status, Status::ok);
}

// ---------------------------------------------------------------------------------------------
// Prefix mode: a reply of any size, its first values kept

namespace {

// A master's ROLE reply with `replicas` replicas: 3 + (1 + 4 per replica) values.
std::string role_of_master(int replicas) {
    std::string r = "*3\r\n$6\r\nmaster\r\n:1234\r\n*" + std::to_string(replicas) + "\r\n";
    for (int i = 0; i < replicas; ++i) {
        const std::string port = std::to_string(6380 + i);
        r += "*3\r\n$9\r\n127.0.0.1\r\n$" + std::to_string(port.size()) + "\r\n" + port +
             "\r\n$4\r\n1234\r\n";
    }
    return r;
}

// Feeds `bytes` in steps of `step` through a buffer of `room` bytes, as Connection::receive
// does: compact() whenever the buffer is full. Returns the status; `out` the kept values.
Status feed_prefix(std::string_view bytes, std::size_t room, std::size_t step, Value* values,
                   std::size_t capacity, Reply& out, std::string& buf) {
    buf.assign(room, '\0');
    Parser p(values, capacity);
    p.reset(true);
    std::size_t used = 0;
    std::size_t fed = 0;
    for (;;) {
        if (used == room) used = p.compact(buf.data(), used);
        if (used == room) return Status::too_large;
        if (fed == bytes.size()) return Status::incomplete;
        std::size_t n = std::min({step, room - used, bytes.size() - fed});
        std::memcpy(buf.data() + used, bytes.data() + fed, n);
        used += n;
        fed += n;
        const Status s = p.parse(buf.data(), used);
        if (s == Status::incomplete) continue;
        if (s == Status::ok) {
            out = p.reply();
            if (!CHECK_EQ(p.consumed(), used) || !CHECK_EQ(fed, bytes.size())) {
                return Status::protocol_error;
            }
        }
        return s;
    }
}

}  // namespace

TEST(prefix_mode_keeps_the_first_values_of_a_reply_of_any_size) {
    for (const int replicas : {0, 1, 2, 3, 17, 200}) {
        const std::string bytes = role_of_master(replicas);
        for (const std::size_t step : {std::size_t{1}, std::size_t{7}, bytes.size()}) {
            Value values[RESPLOCK_MAX_REPLY_VALUES];
            Reply reply;
            std::string buf;
            // A buffer much smaller than the reply: the dropped values' bytes are freed.
            const Status s =
                feed_prefix(bytes, 96, step, values, RESPLOCK_MAX_REPLY_VALUES, reply, buf);
            if (!CHECK_EQ(s, Status::ok)) {
                std::printf("      %d replicas, step %zu\n", replicas, step);
                continue;
            }
            CHECK_EQ(reply.count,
                     std::min<std::size_t>(RESPLOCK_MAX_REPLY_VALUES,
                                           4 + 4 * static_cast<std::size_t>(replicas)));
            CHECK(reply.top().is(Type::array));
            CHECK_EQ(reply.values[1].text(), "master"sv);
            CHECK_EQ(reply.values[2].integer, 1234);
            CHECK_EQ(reply.values[3].size, static_cast<std::uint32_t>(replicas));
        }
    }
}

TEST(prefix_mode_still_checks_what_it_drops) {
    Value values[2];
    Reply reply;
    std::string buf;
    // A malformed value after the kept ones.
    CHECK_EQ(feed_prefix("*3\r\n:1\r\n:2\r\n!x\r\n"sv, 64, 1, values, 2, reply, buf),
             Status::protocol_error);
    // A dropped bulk string over the length limit, or one that cannot fit the buffer whole.
    CHECK_EQ(feed_prefix("*3\r\n:1\r\n:2\r\n$99999999\r\n"sv, 64, 3, values, 2, reply, buf),
             Status::too_large);
    const std::string big = "*3\r\n:1\r\n:2\r\n$100\r\n" + std::string(100, 'x') + "\r\n";
    CHECK_EQ(feed_prefix(big, 64, 5, values, 2, reply, buf), Status::too_large);
    CHECK_EQ(feed_prefix(big, 128, 5, values, 2, reply, buf), Status::ok);
    // Depth is still limited, and counts beyond 2^32 - 1 are refused.
    std::string deep;
    for (int i = 0; i <= RESPLOCK_MAX_DEPTH; ++i)
        deep += "*1\r\n";
    CHECK_EQ(feed_prefix(deep, 64, 1, values, 2, reply, buf), Status::too_large);
    CHECK_EQ(feed_prefix("*4294967296\r\n"sv, 64, 1, values, 2, reply, buf), Status::too_large);
    // Not in prefix mode: the same reply is too large, as before.
    rejects("*3\r\n:1\r\n:2\r\n:3\r\n"sv, Status::too_large, 2);
    // No room to keep anything: every value is parsed and dropped, nothing is written.
    Reply none;
    CHECK_EQ(feed_prefix("*2\r\n:1\r\n:2\r\n"sv, 64, 1, values, 0, none, buf), Status::ok);
    CHECK_EQ(none.count, 0U);
}

TEST(prefix_mode_declared_counts_are_only_counted_down) {
    // A count over RESPLOCK_MAX_ARRAY_ELEMENTS is read in prefix mode, and an unfinished array
    // stays incomplete: nothing is reserved or looped on its strength.
    Value values[4];
    Reply reply;
    std::string buf;
    CHECK_EQ(feed_prefix("*4000000000\r\n:1\r\n:2\r\n"sv, 64, 2, values, 4, reply, buf),
             Status::incomplete);
}

// ---------------------------------------------------------------------------------------------
// Encoder

TEST(encode_set_command_exact_bytes) {
    const std::string_view args[] = {"SET", "lock:a", "token", "PX", "30000", "NX"};
    char out[128];
    std::size_t written = 0;
    REQUIRE_EQ(encode_command(args, 6, out, sizeof out, &written), Status::ok);
    constexpr std::string_view expected =
        "*6\r\n$3\r\nSET\r\n$6\r\nlock:a\r\n$5\r\ntoken\r\n$2\r\nPX\r\n$5\r\n30000\r\n$2\r\nNX\r\n";
    CHECK_EQ(std::string_view(out, written), expected);
}

TEST(encode_is_binary_safe) {
    const std::string_view args[] = {"SET", "k\r\n"sv, "\0\r\n$1\r\n"sv, {}};
    char out[64];
    std::size_t written = 0;
    REQUIRE_EQ(encode_command(args, 4, out, sizeof out, &written), Status::ok);
    constexpr std::string_view expected =
        "*4\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$7\r\n\0\r\n$1\r\n\r\n$0\r\n\r\n"sv;
    CHECK_EQ(std::string_view(out, written), expected);

    // And parses back to the same arguments.
    Value values[5];
    Parser parser(values, 5);
    REQUIRE_EQ(parser.parse(out, written), Status::ok);
    CHECK_EQ(parser.consumed(), written);
    CHECK_EQ(values[0].size, 4u);
    for (std::size_t i = 0; i < 4; ++i)
        CHECK_EQ(values[i + 1].text(), args[i]);
}

TEST(encode_multi_digit_counts_and_lengths) {
    std::string_view args[12];
    for (auto& a : args)
        a = "a";
    args[11] = "0123456789abcdef";
    char out[128];
    std::size_t written = 0;
    REQUIRE_EQ(encode_command(args, 12, out, sizeof out, &written), Status::ok);
    const std::string_view text(out, written);
    CHECK_EQ(text.substr(0, 12), "*12\r\n$1\r\na\r\n"sv);
    CHECK_EQ(text.substr(written - 23), "$16\r\n0123456789abcdef\r\n"sv);
    CHECK_EQ(written, std::size_t{5 + 11 * 7 + 23});
}

TEST(encode_exact_fit_succeeds_and_one_byte_less_is_too_large) {
    const std::string_view args[] = {"GET", "key"};
    constexpr std::string_view expected = "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n";
    constexpr char kGuard = '#';
    char out[expected.size() + 8];

    std::memset(out, kGuard, sizeof out);
    std::size_t written = 0;
    REQUIRE_EQ(encode_command(args, 2, out, expected.size(), &written), Status::ok);
    CHECK_EQ(std::string_view(out, written), expected);
    CHECK_EQ(out[expected.size()], kGuard);

    // Every smaller capacity fails, and nothing is written past it.
    for (std::size_t capacity = 0; capacity < expected.size(); ++capacity) {
        std::memset(out, kGuard, sizeof out);
        const Status s = encode_command(args, 2, out, capacity, &written);
        bool good = CHECK_EQ(s, Status::too_large);
        for (std::size_t i = capacity; good && i < sizeof out; ++i)
            good = CHECK_EQ(out[i], kGuard);
        if (!good) {
            std::printf("      capacity %lu\n", static_cast<unsigned long>(capacity));
            break;
        }
    }
}

TEST(encode_rejects_invalid_arguments) {
    const std::string_view args[] = {"PING", std::string_view(nullptr, 0)};
    char out[32];
    std::size_t written = 99;
    CHECK_EQ(encode_command(args, 0, out, sizeof out, &written), Status::invalid_argument);
    CHECK_EQ(encode_command(nullptr, 1, out, sizeof out, &written), Status::invalid_argument);

    // A null argument with a size, even when it would not fit anyway.
    const std::string_view bad[] = {"SET", std::string_view(nullptr, 3)};
    CHECK_EQ(encode_command(bad, 2, out, sizeof out, &written), Status::invalid_argument);
    CHECK_EQ(encode_command(bad, 2, out, 0, &written), Status::invalid_argument);

    // A null argument of size zero is an empty string.
    REQUIRE_EQ(encode_command(args, 2, out, sizeof out, &written), Status::ok);
    CHECK_EQ(std::string_view(out, written), "*2\r\n$4\r\nPING\r\n$0\r\n\r\n"sv);
}

// ---------------------------------------------------------------------------------------------
// format_decimal

namespace {

bool formats(std::uint32_t value, std::string_view expected) {
    char out[10];
    std::memset(out, '#', sizeof out);
    const std::size_t n = format_decimal(value, out);
    return CHECK_EQ(std::string_view(out, n), expected);
}

}  // namespace

TEST(format_decimal_edges) {
    formats(0, "0");
    formats(9, "9");
    formats(10, "10");
    formats(99, "99");
    formats(100, "100");
    formats(65536, "65536");
    formats(999999999, "999999999");
    formats(1000000000, "1000000000");
    formats(UINT32_MAX - 1, "4294967294");
    formats(UINT32_MAX, "4294967295");
    // Too small an output: nothing is written.
    char out[4] = {'#', '#', '#', '#'};
    CHECK_EQ(format_decimal(12345, out, sizeof out), std::size_t{0});
    CHECK_EQ(std::string_view(out, 4), std::string_view("####"));
    CHECK_EQ(format_decimal(1234, out, sizeof out), std::size_t{4});
    CHECK_EQ(std::string_view(out, 4), std::string_view("1234"));
}

TEST(format_decimal_matches_printf_across_magnitudes) {
    // Powers of ten and their neighbours, plus a walk through every magnitude.
    std::uint64_t p = 1;
    for (int i = 0; i < 10; ++i, p *= 10) {
        for (std::uint64_t wide : {p - 1, p, p + 1, p * 4 + 3}) {
            if (wide > UINT32_MAX) continue;
            const auto v = static_cast<std::uint32_t>(wide);
            char expected[24];
            const int n =
                std::snprintf(expected, sizeof expected, "%lu", static_cast<unsigned long>(v));
            if (!formats(v, {expected, static_cast<std::size_t>(n)})) return;
        }
    }
}
