// RESP2 codec: a command encoder and an incremental, resumable reply parser.
// Pure functions over caller buffers: no I/O, no allocation, no exceptions.
#ifndef RESPLOCK_RESP_HPP
#define RESPLOCK_RESP_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/config.h"
#include "resplock/core/status.hpp"

namespace resplock::resp {

enum class Type : std::uint8_t {
    simple_string,  // +OK
    error,          // -ERR message
    integer,        // :42
    bulk_string,    // $3 foo
    array,          // *2 followed by its elements
    nil_bulk,       // $-1
    nil_array,      // *-1
};

// One parsed value. `data`/`size` view the payload inside the parsed buffer (for an integer, its
// text, sign included; for arrays and nils, data is null). For an array, `size` is its element
// count and the elements follow it directly in the value list (pre-order).
struct Value {
    Type type;
    std::uint32_t size;
    const char* data;
    std::int64_t integer;  // the value of an integer reply, else 0

    std::string_view text() const noexcept { return {data, size}; }
    bool is(Type t) const noexcept { return type == t; }
    // True for a simple string, bulk string or error whose bytes equal `s`.
    bool equals(std::string_view s) const noexcept;
};

// The values of one complete reply in pre-order: values[0] is the top-level value.
struct Reply {
    const Value* values = nullptr;
    std::size_t count = 0;

    const Value& top() const noexcept { return values[0]; }
};

// Incremental parser for exactly one reply. Call parse() with the same buffer each time, holding
// every byte received so far (more with each call); it resumes where it stopped and never reads
// past `len`. Every declared length and count is checked against the limits in config.h before
// it is used; nothing is reserved or iterated on the strength of a declared count.
class Parser {
  public:
    // `values` receives the parsed values; `capacity` bounds how many one reply may have.
    Parser(Value* values, std::size_t capacity) noexcept;

    // Forget any progress and start a new reply. With `prefix`, the reply may be of any size:
    // the first `capacity` values are kept, every later one is parsed, checked and dropped (its
    // array counts are not limited by RESPLOCK_MAX_ARRAY_ELEMENTS, only by 2^32 - 1), and
    // compact() lets the caller free the bytes of dropped values. For a reply whose size grows
    // with a deployment (a master's ROLE lists every replica) when only its start is needed.
    void reset(bool prefix = false) noexcept;

    // Parse buf[0..len).
    // Returns: ok (a complete reply: consumed() bytes, reply() values); incomplete (call again
    // with more bytes); protocol_error (malformed: unknown type byte, a non-digit or empty
    // number, overflow, a negative length other than -1, a missing CR LF); too_large (a bulk
    // length, array count or nesting depth over its limit, or more values than `capacity`).
    // A number that overflows int64 is protocol_error; one in range but over a limit is
    // too_large. Every array counts towards the depth, even an empty one; a nil array does not.
    // After ok or an error, later calls return the same result until reset().
    Status parse(const char* buf, std::size_t len) noexcept;

    // In prefix mode, once values are being dropped: moves the bytes not yet parsed down over
    // those of the values already dropped, and returns how many bytes of buf[0..len) are left
    // (len itself when nothing can go). The next parse() is then given that many (plus new ones).
    // The kept values' views stay valid. A dropped bulk string must still fit the buffer whole.
    std::size_t compact(char* buf, std::size_t len) noexcept;

    // Bytes of the complete reply (valid after ok; in prefix mode, after compact(), of what is
    // left of it).
    std::size_t consumed() const noexcept { return pos_; }
    // The parsed values (complete after ok; views into the buffer given to parse()).
    Reply reply() const noexcept { return {values_, count_}; }

  private:
    Status fail(Status s) noexcept;
    Status finish_value() noexcept;

    // Set by reset(), which the constructor calls. remaining_[i] is read only for i < depth_,
    // after it was written, so reset() leaves it alone. The flags first, within a short byte
    // load's reach (31 B) on a Cortex-M.
    Status state_;
    bool prefix_;
    Value* values_;
    std::size_t capacity_;
    std::size_t count_;
    std::size_t pos_;         // start of the element being parsed (or end of reply once done)
    std::size_t scan_;        // how far the current header line has been searched for CR LF
    std::int64_t bulk_len_;   // declared length of a bulk string whose payload is awaited, or -1
    std::size_t bulk_start_;  // offset of that payload
    std::size_t kept_;        // end of the kept values' bytes once values are dropped, else 0
    std::uint32_t depth_;     // open arrays
    std::uint32_t remaining_[RESPLOCK_MAX_DEPTH];  // elements still expected per open array
};

// Encodes one command, an array of `count` bulk strings (binary-safe), into out[0..capacity).
// `written` must not be null; it is set to 0 on failure. Returns ok with *written set; too_large
// if it does not fit (never writes past capacity); invalid_argument if count is 0 or an argument
// is null with a non-zero size (checked before anything is written).
Status encode_command(const std::string_view* args, std::size_t count, char* out,
                      std::size_t capacity, std::size_t* written) noexcept;

// Writes the decimal digits of `value` to out (no terminator) and returns how many (1..10), or 0
// when they need more than `capacity` bytes (nothing is written then).
std::size_t format_decimal(std::uint32_t value, char* out, std::size_t capacity) noexcept;
inline __attribute__((always_inline)) std::size_t format_decimal(std::uint32_t value,
                                                                 char (&out)[10]) noexcept {
    return format_decimal(value, out, sizeof out);
}

}  // namespace resplock::resp

#endif  // RESPLOCK_RESP_HPP
