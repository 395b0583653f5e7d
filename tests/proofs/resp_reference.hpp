// The reference the parser proof compares resp::Parser with: a one-shot, recursive-descent reader
// of one RESP2 reply, written from the RESP2 specification and the limits that resp.hpp and
// config.h document, sharing no code with src/core/resp.cpp. What it accepts:
//   '+' simple string, '-' error: the text up to the line's first CR, which must be followed by
//       LF. A lone LF inside the text is kept as text: the library's rule (the specification
//       forbids LF in a simple string; Redis never sends one).
//   ':' integer, '$' bulk length, '*' array count: the same kind of line, holding an optional '-'
//       and 1 to 19 digits (leading zeros allowed), in int64 range. More than 19 digits are
//       refused even when zero-padded (an int64 has 19: the library's rule, see
//       twenty_digit_numbers_are_protocol_errors in tests/unit/core/test_resp.cpp).
//   '$' and '*' refuse a negative value other than -1 spelled "-1" (the nils); "$N" is followed
//       by N payload bytes and CR LF.
//   Any other first byte (RESP3's '_', '#', ...) is refused.
// Verdicts: ok (a whole reply, and the bytes it took), incomplete, protocol_error for what is
// malformed, too_large for a bulk length over RESPLOCK_MAX_BULK_LEN, an array count over
// RESPLOCK_MAX_ARRAY_ELEMENTS (in prefix mode: over 2^32 - 1), any array (even an empty one)
// while RESPLOCK_MAX_DEPTH arrays are open (a nil array is no array), and the value after the
// first `capacity` (in prefix mode that value is parsed, checked and not kept).
// When a partial reply gets its verdict: an unknown first byte, and a value past capacity, at
// that byte; anything else of a header line once the line's CR and the byte after it are there;
// a bulk payload's terminator as each of its two bytes arrives. Until then it is incomplete.
#ifndef RESPLOCK_TESTS_RESP_REFERENCE_HPP
#define RESPLOCK_TESTS_RESP_REFERENCE_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "resplock/core/config.h"
#include "resplock/core/resp.hpp"
#include "resplock/core/status.hpp"

namespace reference {

using resplock::Status;
using resplock::resp::Type;

// The most values a proof keeps (the parser's capacity).
inline constexpr std::size_t max_values = 64;

struct Value {
    Type type;
    std::size_t offset;  // of the text or payload in the input (0 for arrays and nils)
    std::size_t size;    // bytes of the text or payload; an array's element count
    std::int64_t integer;
};

struct Reply {
    Status verdict = Status::incomplete;
    std::size_t consumed = 0;  // bytes of the reply when ok
    std::size_t count = 0;     // values kept
    Value values[max_values];
};

// s[b..e) as a RESP number: '-'?, 1..19 digits, in int64 range. The range is checked on the
// digits' text, against the text of INT64_MAX (or of its magnitude plus one when negative).
inline bool read_number(const char* s, std::size_t b, std::size_t e, std::int64_t* out) {
    const bool negative = b < e && s[b] == '-';
    const std::size_t digits = negative ? b + 1 : b;
    if (digits >= e || e - digits > 19) return false;
    for (std::size_t i = digits; i < e; ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
    }
    std::size_t first = digits;  // the first significant digit (or the last zero)
    while (first + 1 < e && s[first] == '0')
        ++first;
    const char* most = negative ? "9223372036854775808" : "9223372036854775807";
    const bool longest = e - first == 19;
    if (longest && std::memcmp(s + first, most, 19) > 0) return false;
    if (negative && longest && std::memcmp(s + first, most, 19) == 0) {
        *out = INT64_MIN;
        return true;
    }
    std::int64_t value = 0;  // at most INT64_MAX from here
    for (std::size_t i = first; i < e; ++i)
        value = value * 10 + (s[i] - '0');
    *out = negative ? -value : value;
    return true;
}

class Reader {
  public:
    Reader(const char* s, std::size_t n, std::size_t capacity, bool prefix, Reply& out) noexcept
        : s_(s),
          n_(n),
          capacity_(capacity < max_values ? capacity : max_values),
          prefix_(prefix),
          reply_(out) {
        reply_.count = 0;
        reply_.consumed = 0;
    }

    void read() {
        reply_.verdict = value(0);
        if (reply_.verdict == Status::ok) reply_.consumed = at_;
    }

  private:
    void keep(bool kept, Type type, std::size_t offset, std::size_t size, std::int64_t integer) {
        if (kept) reply_.values[reply_.count++] = {type, offset, size, integer};
    }

    // One value, inside `open` arrays.
    Status value(std::uint32_t open) {
        if (at_ >= n_) return Status::incomplete;
        const char kind = s_[at_];
        if (kind != '+' && kind != '-' && kind != ':' && kind != '$' && kind != '*') {
            return Status::protocol_error;
        }
        const bool kept = seen_ < capacity_;
        if (!kept && !prefix_) return Status::too_large;
        ++seen_;

        std::size_t cr = at_ + 1;
        while (cr < n_ && s_[cr] != '\r')
            ++cr;
        if (cr >= n_ || cr + 1 >= n_) return Status::incomplete;
        if (s_[cr + 1] != '\n') return Status::protocol_error;
        const std::size_t text = at_ + 1;
        const std::size_t text_len = cr - text;
        at_ = cr + 2;

        if (kind == '+' || kind == '-') {
            keep(kept, kind == '+' ? Type::simple_string : Type::error, text, text_len, 0);
            return Status::ok;
        }
        std::int64_t number = 0;
        if (!read_number(s_, text, cr, &number)) return Status::protocol_error;
        if (kind == ':') {
            keep(kept, Type::integer, text, text_len, number);
            return Status::ok;
        }
        if (number < 0) {
            if (text_len != 2 || s_[text] != '-' || s_[text + 1] != '1') {
                return Status::protocol_error;
            }
            keep(kept, kind == '$' ? Type::nil_bulk : Type::nil_array, 0, 0, 0);
            return Status::ok;
        }
        if (s_[text] == '-') return Status::protocol_error;  // "-0", "-00"...
        if (kind == '$') {
            if (number > RESPLOCK_MAX_BULK_LEN) return Status::too_large;
            const auto len = static_cast<std::size_t>(number);
            const std::size_t end = at_ + len;
            if (n_ > end && s_[end] != '\r') return Status::protocol_error;
            if (n_ > end + 1 && s_[end + 1] != '\n') return Status::protocol_error;
            if (n_ < end + 2) return Status::incomplete;
            keep(kept, Type::bulk_string, at_, len, 0);
            at_ = end + 2;
            return Status::ok;
        }
        const std::uint64_t most = prefix_ ? 0xffffffffU : RESPLOCK_MAX_ARRAY_ELEMENTS;
        if (static_cast<std::uint64_t>(number) > most || open >= RESPLOCK_MAX_DEPTH) {
            return Status::too_large;
        }
        keep(kept, Type::array, 0, static_cast<std::size_t>(number), 0);
        for (std::int64_t i = 0; i < number; ++i) {
            const Status s = value(open + 1);
            if (s != Status::ok) return s;
        }
        return Status::ok;
    }

    const char* s_;
    std::size_t n_;
    std::size_t capacity_;
    bool prefix_;
    Reply& reply_;
    std::size_t at_ = 0;
    std::size_t seen_ = 0;  // values begun, kept or not
};

// Reads s[0..n) into `out`.
inline void read(const char* s, std::size_t n, std::size_t capacity, bool prefix, Reply& out) {
    Reader(s, n, capacity, prefix, out).read();
}

}  // namespace reference

#endif  // RESPLOCK_TESTS_RESP_REFERENCE_HPP
