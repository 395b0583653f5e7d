// RESP2 codec. Written for small flash: no tables but the five header bytes, no templates, no
// 64-bit division.
#include "resplock/core/resp.hpp"

#include <cstring>

#include "core/word_math.hpp"

namespace resplock::resp {

namespace {

// Parses an optionally negative decimal of 1..19 digits. 19 digits never overflow a uint64, so
// the range check is one comparison; more digits are refused even if zero-padded.
__attribute__((noinline)) bool parse_int(const char* p, std::size_t n, std::int64_t* out) noexcept {
    const bool negative = n != 0 && *p == '-';
    if (negative) {
        ++p;
        --n;
    }
    if (n == 0 || n > 19) return false;
    std::uint64_t value = 0;
    for (; n != 0; --n, ++p) {
        const auto digit = static_cast<unsigned>(*p - '0');
        if (digit > 9) return false;
        value = detail::times_10_plus(value, digit);
    }
    // INT64_MAX, or its magnitude plus one for a negative number.
    if (value > (std::uint64_t{1} << 63) - (negative ? 0 : 1)) return false;
    *out = static_cast<std::int64_t>(negative ? 0 - value : value);
    return true;
}

}  // namespace

bool Value::equals(std::string_view s) const noexcept {
    if (type != Type::simple_string && type != Type::bulk_string && type != Type::error) {
        return false;
    }
    if (size != s.size()) return false;
    for (std::size_t i = 0; i != s.size(); ++i) {
        if (data[i] != s[i]) return false;
    }
    return true;
}

// NOLINTBEGIN(cppcoreguidelines-pro-type-member-init): reset() sets what is read before written
// cppcheck-suppress uninitMemberVar
Parser::Parser(Value* values, std::size_t capacity) noexcept
    : values_(values), capacity_(capacity) {
    reset();
}
// NOLINTEND(cppcoreguidelines-pro-type-member-init)

void Parser::reset(bool prefix) noexcept {
    prefix_ = prefix;
    kept_ = 0;
    count_ = 0;
    pos_ = 0;
    scan_ = 0;
    bulk_len_ = -1;
    bulk_start_ = 0;
    depth_ = 0;
    state_ = Status::incomplete;
}

Status Parser::fail(Status s) noexcept {
    state_ = s;
    return s;
}

// A value is complete: count it against each open array, closing those it fills.
Status Parser::finish_value() noexcept {
    while (depth_ != 0) {
        if (--remaining_[depth_ - 1] != 0) return Status::incomplete;
        --depth_;
    }
    state_ = Status::ok;
    return state_;
}

static_assert(RESPLOCK_MAX_BULK_LEN <= 0xffffffffU && RESPLOCK_MAX_ARRAY_ELEMENTS <= 0xffffffffU,
              "a length or count is checked in 32 bits (a Value's size has 32)");
static_assert(static_cast<int>(Type::simple_string) == 0 && static_cast<int>(Type::error) == 1 &&
                  static_cast<int>(Type::integer) == 2 &&
                  static_cast<int>(Type::bulk_string) == 3 && static_cast<int>(Type::array) == 4 &&
                  static_cast<int>(Type::nil_bulk) == 5 && static_cast<int>(Type::nil_array) == 6,
              "Parser::parse derives a value's Type from its header's index in \"+-:$*\"");

Status Parser::parse(const char* buf, std::size_t len) noexcept {
    while (state_ == Status::incomplete) {
        // The value's type is its header's index in "+-:$*" (the order of Type), its nil two
        // further on.
        unsigned type = static_cast<unsigned>(Type::bulk_string);
        const char* data = nullptr;
        std::size_t size = 0;
        std::int64_t integer = 0;
        if (bulk_len_ >= 0) {
            // Awaiting a bulk payload and its CR LF; report a wrong terminator as soon as seen.
            size = static_cast<std::size_t>(bulk_len_);
            const std::size_t end = bulk_start_ + size;
            if (len < end + 2) {
                if (len > end && buf[end] != '\r') return fail(Status::protocol_error);
                return Status::incomplete;
            }
            if (buf[end] != '\r' || buf[end + 1] != '\n') return fail(Status::protocol_error);
            data = buf + bulk_start_;
            bulk_len_ = -1;
            pos_ = end + 2;
        } else {
            if (pos_ >= len) return Status::incomplete;
            const char kind = buf[pos_];
            // Compiled for size, a loop: unrolled, five compares with an exit each take 8 to 10 B
            // more; otherwise the compiler's choice, the fewer instructions.
#if defined(__OPTIMIZE_SIZE__)
#pragma GCC unroll 1
#endif
            for (type = 0; type != 5; ++type) {
                if ("+-:$*"[type] == kind) break;
            }
            if (type == 5) return fail(Status::protocol_error);
            if (count_ >= capacity_) {
                if (!prefix_) return fail(Status::too_large);
                if (kept_ == 0) kept_ = pos_;  // from here on, values are dropped
            }

            // Resume the search for CR where the previous call stopped: linear over any split.
            if (scan_ <= pos_) scan_ = pos_ + 1;
            while (scan_ < len && buf[scan_] != '\r')
                ++scan_;
            if (scan_ + 1 >= len) return Status::incomplete;
            if (buf[scan_ + 1] != '\n') return fail(Status::protocol_error);

            data = buf + pos_ + 1;
            size = scan_ - pos_ - 1;
            pos_ = scan_ + 2;
            if (type >= static_cast<unsigned>(Type::integer)) {
                if (!parse_int(data, size, &integer)) return fail(Status::protocol_error);
                if (type != static_cast<unsigned>(Type::integer)) {
                    // Unless negative (the nil marker), its high word says whether it fits 32 bits.
                    const auto high = static_cast<std::uint32_t>(integer >> 32);
                    const auto low = static_cast<std::uint32_t>(integer);
                    if (*data == '-') {
                        // The only negative length is the nil marker, spelled exactly "-1" (the
                        // digits were checked: a '1' after the '-' is the whole check).
                        if (size != 2 || data[1] != '1') return fail(Status::protocol_error);
                        type += 2;
                    } else if (type == static_cast<unsigned>(Type::bulk_string)) {
                        if (high != 0 || low > RESPLOCK_MAX_BULK_LEN)
                            return fail(Status::too_large);
                        bulk_len_ = integer;
                        bulk_start_ = pos_;
                        continue;  // the value is stored once its payload has arrived
                    } else if (high != 0 || (!prefix_ && low > RESPLOCK_MAX_ARRAY_ELEMENTS) ||
                               depth_ >= RESPLOCK_MAX_DEPTH) {
                        // The declared count is checked before it is used; it is only ever
                        // decremented.
                        return fail(Status::too_large);
                    }
                    // Nils and arrays have no payload; an array's size is its element count.
                    data = nullptr;
                    size = type == static_cast<unsigned>(Type::array)
                               ? static_cast<std::size_t>(integer)
                               : 0;
                    integer = 0;
                }
            }
        }
        if (count_ < capacity_) {
            values_[count_++] = {static_cast<Type>(type), static_cast<std::uint32_t>(size), data,
                                 integer};
        }
        if (type == static_cast<unsigned>(Type::array) && size != 0) {
            remaining_[depth_++] = static_cast<std::uint32_t>(size);
        } else {
            finish_value();
        }
    }
    return state_;
}

std::size_t Parser::compact(char* buf, std::size_t len) noexcept {
    // pos_ is the start of the value being parsed, or of the payload of a bulk string whose
    // header was read (bulk_start_ == pos_): everything in [kept_, pos_) was dropped.
    if (kept_ == 0 || state_ != Status::incomplete || pos_ == kept_) return len;
    const std::size_t gone = pos_ - kept_;
    // Down over the dropped bytes, front to back (the ranges overlap). A loop, not memmove: the
    // C library's would add hundreds of bytes to a firmware for this one call.
    for (std::size_t from = pos_; from < len; ++from)
        buf[from - gone] = buf[from];
    pos_ = kept_;
    scan_ = pos_;  // the header search starts again from the value's first byte
    if (bulk_len_ >= 0) bulk_start_ = pos_;
    return len - gone;
}

Status encode_command(const std::string_view* args, std::size_t count, char* out,
                      std::size_t capacity, std::size_t* written) noexcept {
    *written = 0;
    if (count == 0 || args == nullptr) return Status::invalid_argument;
    for (std::size_t i = 0; i != count; ++i) {
        if (args[i].data() == nullptr && args[i].size() != 0) return Status::invalid_argument;
    }
    // Item 0 is the array header (*count), item i the bulk string of args[i - 1] ($size, bytes).
    // Each piece is checked against the room left before it is written: nothing is written
    // past capacity.
    std::size_t at = 0;
    for (std::size_t i = 0; i <= count; ++i) {
        const std::size_t n = i == 0 ? count : args[i - 1].size();
        // A count or length of 2^32 or more (two shifts: size_t may be 32 bits) is refused.
        if (at == capacity || (n >> 16 >> 16) != 0) return Status::too_large;
        // The digits go straight into the output (no copy on the stack: the deepest call path).
        const std::size_t digits =
            format_decimal(static_cast<std::uint32_t>(n), out + at + 1, capacity - at - 1);
        if (digits == 0) return Status::too_large;
        out[at] = i == 0 ? '*' : '$';
        at += 1 + digits;
        // CR LF, then for a bulk string its bytes and CR LF.
        const std::size_t room = capacity - at;
        if (room < 2 || (i != 0 && (room < 4 || n > room - 4))) return Status::too_large;
        out[at] = '\r';
        out[at + 1] = '\n';
        at += 2;
        if (i == 0) continue;
        if (n != 0) std::memcpy(out + at, args[i - 1].data(), n);
        out[at + n] = '\r';
        out[at + n + 1] = '\n';
        at += n + 2;
    }
    *written = at;
    return Status::ok;
}

std::size_t format_decimal(std::uint32_t value, char* out, std::size_t capacity) noexcept {
#if defined(__ARM_ARCH_6M__)
    return detail::format_decimal_by_subtraction(value, out, capacity);
#else
    // Counts the digits by comparisons, then writes them in place from the last. 32-bit
    // divisions by a constant: a multiplication on these cores, no library call.
    std::size_t n = 1;
    for (std::uint32_t power = 10; n < 10 && value >= power; power *= 10)
        ++n;
    if (n > capacity) return 0;
    for (std::size_t i = n; i != 0; value /= 10)
        out[--i] = static_cast<char>('0' + value % 10);
    return n;
#endif
}

}  // namespace resplock::resp
