// Bounded proof of the RESP2 reply parser (resp::Parser), against the one-shot reference in
// resp_reference.hpp:
//   every_input_up_to_the_bound_in_every_split: every byte string of 0..6 bytes over the 13
//     bytes that steer the parser, fed in every split into consecutive prefixes (2^(n-1) ways
//     for n bytes), for three parsers: the connection's capacity, capacity 1, and capacity 1 in
//     prefix mode (compact() is not called). Every call's verdict must be the reference's for the
//     bytes it was given; at ok, the bytes consumed and every value (type, view, size, integer)
//     too.
//   every_limit_at_and_around_its_bound: every declared length and count at and around each
//     limit of config.h, huge numbers, signs, leading zeros and int64 overflow, in four nesting
//     contexts and six parser set-ups, each fed whole, one byte at a time and cut once at every
//     position; the headline verdicts are also stated here, so that a reference that drifted
//     from the documented limits fails too.
// Each call is given a heap buffer whose bytes past `len` are unreadable under AddressSanitizer.
// This file is built twice: with the limits of config.h (proof.resp_parser) and with every limit
// at 1 (proof.resp_parser_limits_1: RESPLOCK_MAX_BULK_LEN, RESPLOCK_MAX_ARRAY_ELEMENTS and
// RESPLOCK_MAX_DEPTH), so that the exhaustive bound reaches each limit, limit - 1 and limit + 1.
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "check.hpp"
#include "proof.hpp"
#include "resp_reference.hpp"
#include "resplock/core/config.h"
#include "resplock/core/resp.hpp"

namespace {

using resplock::Status;
using resplock::resp::Parser;
using resplock::resp::Type;
using resplock::resp::Value;

// The parser's state is copied as bytes, so that one prefix's states serve every continuation.
static_assert(std::is_trivially_copyable_v<Parser>);

// The bound: every string of at most this many bytes. 6 bytes take about 25 s under ASan + UBSan
// (Debug), 4 s without; each byte more multiplies that by about 14.
#ifndef RESPLOCK_PROOF_MAX_LEN
#define RESPLOCK_PROOF_MAX_LEN 6
#endif
constexpr std::size_t max_len = RESPLOCK_PROOF_MAX_LEN;
static_assert(max_len >= 1 && max_len <= 31);  // calls are recorded as a 32-bit mask

// The bytes that steer the parser: the five RESP2 type bytes and RESP3's '_' (refused), digits
// (0, 1 and 2 are limit - 1, limit and limit + 1 when the limits are 1; 9 is a large digit), '-'
// (a type byte and a sign), CR, LF, and one byte that is none of these.
constexpr char alphabet[] = {'*', '$', ':', '+', '-', '_', '0', '1', '2', '9', '\r', '\n', 'a'};
constexpr std::size_t symbols = sizeof alphabet;

struct Mode {
    std::size_t capacity;
    bool prefix;
    const char* name;
};

constexpr Mode exhaustive_modes[] = {
    {RESPLOCK_MAX_REPLY_VALUES, false, "capacity RESPLOCK_MAX_REPLY_VALUES"},
    {1, false, "capacity 1"},
    {1, true, "capacity 1, prefix mode"},
};
constexpr std::size_t state_values = RESPLOCK_MAX_REPLY_VALUES;  // the largest capacity above
static_assert(state_values <= reference::max_values);

bool holds_text(Type t) {
    return t == Type::simple_string || t == Type::error || t == Type::integer ||
           t == Type::bulk_string;
}

// Whether values[0..count) are the reference's, each view at the reference's offset in buf.
bool same_values(const Value* values, std::size_t count, const reference::Reply& want,
                 const char* buf) {
    if (count != want.count) return false;
    for (std::size_t i = 0; i < count; ++i) {
        const reference::Value& r = want.values[i];
        const Value& v = values[i];
        const char* data = holds_text(r.type) ? buf + r.offset : nullptr;
        if (v.type != r.type || v.size != r.size || v.data != data || v.integer != r.integer) {
            return false;
        }
    }
    return true;
}

// The input, its first 80 bytes when longer.
void print_input(const char* buf, std::size_t n) {
    check::print(std::string_view(buf, n < 80 ? n : 80));
    std::printf("%s (%zu bytes)", n < 80 ? "" : "...", n);
}

void print_values(const Value* values, std::size_t count, const char* buf) {
    for (std::size_t i = 0; i < count; ++i) {
        const Value& v = values[i];
        std::printf(" {type %d, size %" PRIu32 ", at %td, integer %" PRId64 "}",
                    static_cast<int>(v.type), v.size, v.data != nullptr ? v.data - buf : -1,
                    v.integer);
    }
}

void print_values(const reference::Reply& want) {
    for (std::size_t i = 0; i < want.count; ++i) {
        const reference::Value& r = want.values[i];
        std::printf(" {type %d, size %zu, at %td, integer %" PRId64 "}", static_cast<int>(r.type),
                    r.size, holds_text(r.type) ? static_cast<std::ptrdiff_t>(r.offset) : -1,
                    r.integer);
    }
}

// Prints the parser's answer and the reference's.
void print_answers(Status got, const Parser& p, const reference::Reply& want, const char* buf) {
    std::printf("\n      parser:    ");
    check::print(got);
    if (got == Status::ok) {
        std::printf(", consumed %zu, values", p.consumed());
        print_values(p.reply().values, p.reply().count, buf);
    }
    std::printf("\n      reference: ");
    check::print(want.verdict);
    if (want.verdict == Status::ok) {
        std::printf(", consumed %zu, values", want.consumed);
        print_values(want);
    }
    std::printf("\n");
}

// Whether a call's answer is the reference's.
bool agrees(Status got, const Parser& p, const reference::Reply& want, const char* buf) {
    if (got != want.verdict) return false;
    if (got != Status::ok) return true;
    return p.consumed() == want.consumed &&
           same_values(p.reply().values, p.reply().count, want, buf);
}

// ---- Every input up to the bound, in every split -----------------------------------------------

// A parser after some calls: its bytes, the values it had stored, and (for a failure's message)
// which calls made it.
struct State {
    alignas(Parser) unsigned char bytes[sizeof(Parser)];
    Value values[state_values];
    std::size_t count;
    Status last;          // the last call's result (incomplete before the first)
    std::uint32_t calls;  // bit k: a call was given k bytes
};

bool same_state(const State& a, const State& b) {
    if (std::memcmp(a.bytes, b.bytes, sizeof a.bytes) != 0 || a.count != b.count) return false;
    for (std::size_t i = 0; i < a.count; ++i) {
        const Value& x = a.values[i];
        const Value& y = b.values[i];
        if (x.type != y.type || x.size != y.size || x.data != y.data || x.integer != y.integer) {
            return false;
        }
    }
    return true;
}

// Walks the tree of strings depth first. At a string of n bytes, `stack_` holds every distinct
// parser state that some split of its first n - 1 bytes leads to (the fresh parser among them);
// each is given the n bytes (its last call then ends at n), which covers every split of the n
// bytes, and the new states join the stack for the longer strings. Two states with the same bytes
// and stored values answer every later call alike (parse() reads nothing else; it only writes
// the value list), so a state reached twice is kept once.
class Explorer {
  public:
    explicit Explorer(const Mode& mode)
        : mode_(mode), values_(new Value[mode.capacity]), buf_(new char[max_len]) {
        std::memset(live_bytes_, 0, sizeof live_bytes_);
        live_ = new (live_bytes_) Parser(values_.get(), mode.capacity);
        live_->reset(mode.prefix);
        State fresh{};
        std::memcpy(fresh.bytes, live_bytes_, sizeof fresh.bytes);
        fresh.count = 0;
        fresh.last = Status::incomplete;
        fresh.calls = 0;
        stack_.reserve(4096);
        stack_.push_back(fresh);
    }

    void run() { visit(0); }

    unsigned long long strings = 0;  // inputs
    unsigned long long splits = 0;   // ways to feed them (2^(n-1) for n >= 1 bytes, 1 for none)
    unsigned long long calls = 0;    // parse() calls made
    std::size_t most_states = 0;     // the largest set of distinct states for one prefix
    bool failed = false;

  private:
    void visit(std::size_t n) {
        const std::size_t base = stack_.size();
        proof::forbid(buf_.get() + n, max_len - n);
        reference::read(buf_.get(), n, mode_.capacity, mode_.prefix, want_);
        for (std::size_t i = 0; i < base && !failed; ++i)
            step(i, n, want_);
        proof::allow(buf_.get() + n, max_len - n);
        ++strings;
        splits += n == 0 ? 1 : std::uint64_t{1} << (n - 1);
        most_states = std::max(most_states, stack_.size());
        if (n < max_len) {
            for (std::size_t c = 0; c < symbols && !failed; ++c) {
                buf_[n] = alphabet[c];
                visit(n + 1);
            }
        }
        stack_.resize(base);
    }

    // Gives stack_[from] the n bytes; checks the answer; keeps the state it leads to if new.
    void step(std::size_t from, std::size_t n, const reference::Reply& want) {
        const State& before = stack_[from];
        std::memcpy(live_bytes_, before.bytes, sizeof live_bytes_);
        std::copy(before.values, before.values + before.count, values_.get());
        const Status got = live_->parse(buf_.get(), n);
        ++calls;
        const bool sticky_kept = before.last == Status::incomplete || got == before.last;
        const std::size_t count = live_->reply().count;
        if (!agrees(got, *live_, want, buf_.get()) || !sticky_kept || count > mode_.capacity) {
            fail(before, n, got, want);
            return;
        }
        State next;
        std::memcpy(next.bytes, live_bytes_, sizeof next.bytes);
        next.count = std::min(count, state_values);
        std::copy(values_.get(), values_.get() + next.count, next.values);
        next.last = got;
        next.calls = before.calls | std::uint32_t{1} << n;
        for (std::size_t i = 0; i < stack_.size(); ++i) {
            if (same_state(stack_[i], next)) return;
        }
        stack_.push_back(next);
    }

    void fail(const State& before, std::size_t n, Status got, const reference::Reply& want) {
        failed = true;
        check::fail(__FILE__, __LINE__, "the parser disagrees with the reference");
        std::printf("      %s; input ", mode_.name);
        print_input(buf_.get(), n);
        std::printf("\n      calls given bytes:");
        for (std::size_t k = 0; k <= max_len; ++k) {
            if ((before.calls >> k & 1U) != 0) std::printf(" %zu", k);
        }
        std::printf(" %zu (this one)", n);
        if (before.last != Status::incomplete) {
            std::printf("; the call before returned ");
            check::print(before.last);
        }
        print_answers(got, *live_, want, buf_.get());
    }

    const Mode mode_;
    std::unique_ptr<Value[]> values_;  // exactly `capacity` values: a write past them faults
    std::unique_ptr<char[]> buf_;      // the input; bytes past a call's len are unreadable
    alignas(Parser) unsigned char live_bytes_[sizeof(Parser)];
    Parser* live_;
    std::vector<State> stack_;
    reference::Reply want_;
};

TEST(every_input_up_to_the_bound_in_every_split) {
    unsigned long long cases = 0;
    unsigned long long calls = 0;
    unsigned long long splits = 0;
    const proof::Timer timer;
    for (const Mode& mode : exhaustive_modes) {
        const proof::Timer one;
        Explorer explorer(mode);
        explorer.run();
        std::printf(
            "    %s: %llu inputs, %llu splits, %llu calls, at most %zu states per "
            "prefix, %.2f s\n",
            mode.name, explorer.strings, explorer.splits, explorer.calls, explorer.most_states,
            one.seconds());
        if (explorer.failed) return;
        // Inputs: 1 + 13 + ... + 13^max_len.
        unsigned long long expected = 0;
        for (std::size_t n = 0, power = 1; n <= max_len; ++n, power *= symbols)
            expected += power;
        CHECK_EQ(explorer.strings, expected);
        cases += explorer.strings;
        calls += explorer.calls;
        splits += explorer.splits;
    }
    char bound[200];
    std::snprintf(bound, sizeof bound,
                  "every string of 0..%zu bytes over %zu symbols, every split (%llu splits, "
                  "%llu calls), 3 parser set-ups",
                  max_len, symbols, splits, calls);
    proof::report("resp_parser.exhaustive", bound, cases, timer);
}

// ---- Every limit at and around its bound -----------------------------------------------------

std::string decimal(std::uint64_t v) {
    char text[24];
    std::snprintf(text, sizeof text, "%" PRIu64, v);
    return text;
}

constexpr std::size_t big_capacity =
    2 * (RESPLOCK_MAX_ARRAY_ELEMENTS + RESPLOCK_MAX_DEPTH) + 4 < reference::max_values
        ? 2 * (RESPLOCK_MAX_ARRAY_ELEMENTS + RESPLOCK_MAX_DEPTH) + 4
        : reference::max_values;

struct Runner {
    unsigned long long cases = 0;
    unsigned long long calls = 0;
    bool failed = false;

    void mismatch(const char* how, std::string_view wire, std::size_t capacity, bool prefix,
                  std::size_t k, std::size_t cut, Status got, const Parser& p,
                  const reference::Reply& want, const char* buf) {
        failed = true;
        check::fail(__FILE__, __LINE__, "the parser disagrees with the reference");
        std::printf("      %s, capacity %zu%s; input ", how, capacity,
                    prefix ? ", prefix mode" : "");
        print_input(wire.data(), wire.size());
        std::printf("\n      this call given %zu bytes", k);
        if (cut != 0) std::printf(" (after one given %zu)", cut);
        print_answers(got, p, want, buf);
    }

    // `wire` whole, one byte at a time, and cut once at every position, each in a heap buffer of
    // exactly its size. Returns the reference's verdict on the whole.
    Status run(std::string_view wire, std::size_t capacity, bool prefix) {
        const std::size_t n = wire.size();
        std::unique_ptr<char[]> buf(new char[n]);
        std::memcpy(buf.get(), wire.data(), n);
        std::unique_ptr<Value[]> values(new Value[capacity]);
        Parser p(values.get(), capacity);
        ++cases;
        const char* b = buf.get();
        reference::Reply whole;
        reference::read(b, n, capacity, prefix, whole);
        reference::Reply want;

        p.reset(prefix);
        Status got = p.parse(b, n);
        ++calls;
        if (!agrees(got, p, whole, b)) {
            mismatch("whole", wire, capacity, prefix, n, 0, got, p, whole, b);
            return whole.verdict;
        }

        p.reset(prefix);
        for (std::size_t k = 0; k <= n; ++k) {
            proof::forbid(b + k, n - k);
            reference::read(b, k, capacity, prefix, want);
            got = p.parse(b, k);
            proof::allow(b + k, n - k);
            ++calls;
            if (!agrees(got, p, want, b)) {
                mismatch("one byte at a time", wire, capacity, prefix, k, 0, got, p, want, b);
                return whole.verdict;
            }
        }

        for (std::size_t cut = 1; cut < n; ++cut) {
            p.reset(prefix);
            proof::forbid(b + cut, n - cut);
            reference::read(b, cut, capacity, prefix, want);
            got = p.parse(b, cut);
            proof::allow(b + cut, n - cut);
            ++calls;
            if (!agrees(got, p, want, b)) {
                mismatch("cut once", wire, capacity, prefix, cut, 0, got, p, want, b);
                return whole.verdict;
            }
            got = p.parse(b, n);
            ++calls;
            if (!agrees(got, p, whole, b)) {
                mismatch("cut once", wire, capacity, prefix, n, cut, got, p, whole, b);
                return whole.verdict;
            }
        }
        return whole.verdict;
    }
};

struct Setup {
    std::size_t capacity;
    bool prefix;
};
constexpr Setup setups[] = {
    {RESPLOCK_MAX_REPLY_VALUES, false},
    {RESPLOCK_MAX_REPLY_VALUES, true},
    {1, false},
    {1, true},
    {big_capacity, false},
    {big_capacity, true},
};

// Numbers for ':' integers, '$' lengths and '*' counts.
std::vector<std::string> numbers() {
    std::vector<std::string> v = {
        "0", "1", "2", "9", "-1", "-2", "-0", "-00", "00", "01", "-01", "007", "", "-", "+1", "--1",
        "1-", "1a", " 1", "1 ", "a", "-a",
        // Around 2^31, 2^32 (an array count in prefix mode is at most 2^32 - 1) and int64.
        "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296",
        "4294967297", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "18446744073709551615", "18446744073709551616",
        "99999999999999999999", "9999999999999999999", "1000000000000000000",
        "-1000000000000000000", "10000000000000000000",
        // 19 digits zero-padded (accepted) and 20 (refused), signed and not.
        "0000000000000000001", "00000000000000000001", "-0000000000000000001",
        "-00000000000000000001", "0000000000000000000", "00000000000000000000",
        "-0000000000000000000"};
    for (const std::uint64_t limit :
         {std::uint64_t{RESPLOCK_MAX_BULK_LEN}, std::uint64_t{RESPLOCK_MAX_ARRAY_ELEMENTS},
          std::uint64_t{RESPLOCK_MAX_REPLY_VALUES}}) {
        for (const std::uint64_t n : {limit - 1, limit, limit + 1}) {
            v.push_back(decimal(n));
            v.push_back("0" + decimal(n));
            v.push_back("-" + decimal(n));
            std::string padded = decimal(n);
            padded.insert(0, 19 - padded.size(), '0');
            v.push_back(padded);
            v.push_back("0" + padded);
        }
    }
    return v;
}

// A reply: header kind + text, and for a '$' of a usable length its payload, for a '*' of a
// small count its elements (at most 3 more for a large count: such a reply stays incomplete).
std::string reply_with(char kind, const std::string& text) {
    std::string wire(1, kind);
    wire += text;
    wire += "\r\n";
    std::int64_t n = 0;
    if (!reference::read_number(text.data(), 0, text.size(), &n) || n < 0) return wire;
    if (kind == '$' && n <= RESPLOCK_MAX_BULK_LEN) {
        wire.append(static_cast<std::size_t>(n), 'x');
        wire += "\r\n";
    } else if (kind == '*') {
        const std::int64_t elements = n <= 2 * RESPLOCK_MAX_ARRAY_ELEMENTS + 2 ? n : 3;
        for (std::int64_t i = 0; i < elements; ++i)
            wire += ":1\r\n";
    }
    return wire;
}

// `inner` as the only element of `open` nested arrays.
std::string nested(std::size_t open, const std::string& inner) {
    std::string wire;
    for (std::size_t i = 0; i < open; ++i)
        wire += "*1\r\n";
    return wire + inner;
}

TEST(every_limit_at_and_around_its_bound) {
    const proof::Timer timer;
    Runner runner;
    const std::size_t contexts[] = {0, 1, RESPLOCK_MAX_DEPTH - 1, RESPLOCK_MAX_DEPTH};

    // Every number as an integer, a bulk length and an array count, in every context and set-up.
    // Bulk payloads longer than 256 bytes (about four calls per byte) run in two contexts and
    // four set-ups only.
    for (const std::string& text : numbers()) {
        for (const char kind : {':', '$', '*'}) {
            const std::string inner = reply_with(kind, text);
            for (const std::size_t open : contexts) {
                for (const Setup& s : setups) {
                    if (inner.size() > 256 &&
                        (open == 1 || open + 1 == RESPLOCK_MAX_DEPTH || s.capacity == 1)) {
                        continue;
                    }
                    runner.run(nested(open, inner), s.capacity, s.prefix);
                    if (runner.failed) return;
                }
            }
        }
    }

    // Arrays of 0 .. limit + 2 elements (the count limit and, with its values, the capacity),
    // and nests of up to depth + 1 arrays around each kind of innermost value.
    for (std::size_t n = 0; n <= RESPLOCK_MAX_ARRAY_ELEMENTS + 2; ++n) {
        std::string wire = "*" + decimal(n) + "\r\n";
        for (std::size_t i = 0; i < n; ++i)
            wire += i % 2 == 0 ? "+\r\n" : "$1\r\n\n\r\n";
        for (const Setup& s : setups) {
            runner.run(wire, s.capacity, s.prefix);
            if (runner.failed) return;
        }
    }
    for (std::size_t open = 0; open <= RESPLOCK_MAX_DEPTH + 1; ++open) {
        for (const char* inner : {"*0\r\n", "*-1\r\n", "+\r\n", "$-1\r\n", "*1\r\n+\r\n"}) {
            for (const Setup& s : setups) {
                runner.run(nested(open, inner), s.capacity, s.prefix);
                if (runner.failed) return;
            }
        }
    }

    // The headline verdicts, stated here rather than derived, so that a reference drifted from
    // the documented limits fails as well.
    const std::string max_bulk = decimal(RESPLOCK_MAX_BULK_LEN);
    const std::string over_bulk = decimal(std::uint64_t{RESPLOCK_MAX_BULK_LEN} + 1);
    const std::string max_count = decimal(RESPLOCK_MAX_ARRAY_ELEMENTS);
    const std::string over_count = decimal(RESPLOCK_MAX_ARRAY_ELEMENTS + 1);
    struct Headline {
        std::string wire;
        std::size_t capacity;
        bool prefix;
        Status verdict;
    };
    std::vector<Headline> headlines = {
        {reply_with('$', max_bulk), 1, false, Status::ok},
        {reply_with('$', over_bulk), 1, false, Status::too_large},
        {"$" + over_bulk + "\r\n", 1, true, Status::too_large},
        {reply_with('*', max_count), big_capacity, false, Status::ok},
        {reply_with('*', over_count), big_capacity, false, Status::too_large},
        {reply_with('*', over_count), big_capacity, true, Status::ok},
        {"*4294967295\r\n", 1, true, Status::incomplete},
        {"*4294967296\r\n", 1, true, Status::too_large},
        {nested(RESPLOCK_MAX_DEPTH - 1, "*0\r\n"), big_capacity, false, Status::ok},
        {nested(RESPLOCK_MAX_DEPTH, "*0\r\n"), big_capacity, false, Status::too_large},
        {nested(RESPLOCK_MAX_DEPTH, "*-1\r\n"), big_capacity, false, Status::ok},
        {nested(RESPLOCK_MAX_DEPTH, "*0\r\n"), 1, true, Status::too_large},
        {"*1\r\n+\r\n", 1, false, Status::too_large},
        {"*1\r\n+\r\n", 1, true, Status::ok},
        {"*1\r\n+\r\n", 2, false, Status::ok},
        {":9223372036854775807\r\n", 1, false, Status::ok},
        {":9223372036854775808\r\n", 1, false, Status::protocol_error},
        {":-9223372036854775808\r\n", 1, false, Status::ok},
        {":-9223372036854775809\r\n", 1, false, Status::protocol_error},
        {":0000000000000000001\r\n", 1, false, Status::ok},
        {":00000000000000000001\r\n", 1, false, Status::protocol_error},
        {":+1\r\n", 1, false, Status::protocol_error},
        {":\r\n", 1, false, Status::protocol_error},
        {"$-1\r\n", 1, false, Status::ok},
        {"$-0\r\n", 1, false, Status::protocol_error},
        {"$-2\r\n", 1, false, Status::protocol_error},
        {"*-01\r\n", 1, false, Status::protocol_error},
        {"$9223372036854775807\r\n", 1, false, Status::too_large},
        {"$9223372036854775808\r\n", 1, false, Status::protocol_error},
        {"_\r\n", 1, false, Status::protocol_error},
    };
    // The connection's capacity: a flat array of that many values fits, one more does not.
    if (RESPLOCK_MAX_REPLY_VALUES - 1 <= RESPLOCK_MAX_ARRAY_ELEMENTS) {
        const std::string fits = decimal(RESPLOCK_MAX_REPLY_VALUES - 1);
        const std::string over = decimal(RESPLOCK_MAX_REPLY_VALUES);
        headlines.push_back({reply_with('*', fits), RESPLOCK_MAX_REPLY_VALUES, false, Status::ok});
        headlines.push_back(
            {reply_with('*', over), RESPLOCK_MAX_REPLY_VALUES, false, Status::too_large});
        headlines.push_back({reply_with('*', over), RESPLOCK_MAX_REPLY_VALUES, true, Status::ok});
    }
    for (const Headline& h : headlines) {
        const Status verdict = runner.run(h.wire, h.capacity, h.prefix);
        if (runner.failed) return;
        if (!CHECK_EQ(verdict, h.verdict)) {
            std::printf("      input ");
            print_input(h.wire.data(), h.wire.size());
            std::printf(", capacity %zu%s\n", h.capacity, h.prefix ? ", prefix mode" : "");
            return;
        }
    }

    char bound[200];
    std::snprintf(bound, sizeof bound,
                  "each limit -1/at/+1, int64 edges, signs, zero padding, in 4 contexts and "
                  "6 set-ups, whole, byte by byte and every single cut (%llu calls)",
                  runner.calls);
    proof::report("resp_parser.limits", bound, runner.cases, timer);
}

}  // namespace
