// Fuzz target for the RESP reply parser. The input is the byte stream a server sent. Beyond "no
// crash", each input is checked against a plain recursive-descent model of the same grammar and
// limits, every view must lie inside the bytes consumed, and feeding the stream in any split
// (growing prefixes of one buffer, as Connection does) must give the same result as feeding it
// whole. Bytes past what the parser was given are poisoned under ASan, and hold CR LF garbage
// otherwise, so a read past `len` is caught or changes the outcome.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "resplock/core/resp.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(FUZZ_ASAN)
#define FUZZ_ASAN 1
#endif
#ifdef FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#define FUZZ_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define FUZZ_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define FUZZ_POISON(p, n) ((void)(p), (void)(n))
#define FUZZ_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

using resplock::Status;
using resplock::resp::Parser;
using resplock::resp::Reply;
using resplock::resp::Type;
using resplock::resp::Value;

namespace {

// A parse result independent of the buffer it came from: values by offset.
struct Item {
    Type type;
    std::size_t offset;  // of the payload; 0 for arrays and nils
    std::uint32_t size;
    std::int64_t integer;
    bool operator==(const Item& o) const {
        return type == o.type && offset == o.offset && size == o.size && integer == o.integer;
    }
};

struct Outcome {
    Status status = Status::incomplete;
    std::size_t consumed = 0;  // after ok only
    std::vector<Item> items;   // after ok only
    bool operator==(const Outcome& o) const {
        return status == o.status && consumed == o.consumed && items == o.items;
    }
};

// The grammar as the header documents it, over the whole input at once. Checks happen in stream
// order; within one value: the type byte, the value count, the CR LF of the header line, the
// number, then the limits; a bulk payload's terminator is judged as soon as its first byte is in.
class Model {
  public:
    Model(const std::uint8_t* data, std::size_t len, std::size_t capacity)
        : b_(data), n_(len), capacity_(capacity) {}

    Outcome run() {
        Outcome o;
        o.status = value(0, o.items);
        if (o.status == Status::ok) {
            o.consumed = pos_;
        } else {
            o.items.clear();
        }
        return o;
    }

  private:
    // An optional '-' and 1..19 decimal digits (more are refused even when zero-padded) that
    // strtoll reads without overflow.
    bool number(std::size_t from, std::size_t to, std::int64_t* out) const {
        std::string text(reinterpret_cast<const char*>(b_) + from, to - from);
        const std::size_t digits = text.size() - (text.empty() || text[0] != '-' ? 0 : 1);
        if (digits == 0 || digits > 19) return false;
        for (std::size_t i = text.size() - digits; i < text.size(); ++i) {
            if (text[i] < '0' || text[i] > '9') return false;
        }
        errno = 0;
        const long long v = std::strtoll(text.c_str(), nullptr, 10);
        if (errno == ERANGE) return false;
        *out = v;
        return true;
    }

    Status value(std::uint32_t depth, std::vector<Item>& out) {
        if (pos_ >= n_) return Status::incomplete;
        const char kind = static_cast<char>(b_[pos_]);
        if (std::strchr("+-:$*", kind) == nullptr || kind == '\0') return Status::protocol_error;
        if (out.size() >= capacity_) return Status::too_large;
        std::size_t cr = pos_ + 1;
        while (cr < n_ && b_[cr] != '\r')
            ++cr;
        if (cr + 1 >= n_) return Status::incomplete;
        if (b_[cr + 1] != '\n') return Status::protocol_error;
        const std::size_t line = pos_ + 1;
        const std::uint32_t line_len = static_cast<std::uint32_t>(cr - line);
        pos_ = cr + 2;
        if (kind == '+' || kind == '-') {
            out.push_back({kind == '+' ? Type::simple_string : Type::error, line, line_len, 0});
            return Status::ok;
        }
        std::int64_t v = 0;
        if (!number(line, cr, &v)) return Status::protocol_error;
        if (kind == ':') {
            out.push_back({Type::integer, line, line_len, v});
            return Status::ok;
        }
        if (b_[line] == '-') {
            // Lengths and counts: "-1" is nil; any other signed spelling ("-0", "-01") is wrong.
            if (v != -1 || line_len != 2) return Status::protocol_error;
            out.push_back({kind == '$' ? Type::nil_bulk : Type::nil_array, 0, 0, 0});
            return Status::ok;
        }
        if (kind == '$') {
            if (v > RESPLOCK_MAX_BULK_LEN) return Status::too_large;
            const std::size_t start = pos_;
            const std::size_t end = start + static_cast<std::size_t>(v);
            if (n_ > end && b_[end] != '\r') return Status::protocol_error;
            if (n_ < end + 2) return Status::incomplete;
            if (b_[end + 1] != '\n') return Status::protocol_error;
            out.push_back({Type::bulk_string, start, static_cast<std::uint32_t>(v), 0});
            pos_ = end + 2;
            return Status::ok;
        }
        if (v > RESPLOCK_MAX_ARRAY_ELEMENTS || depth >= RESPLOCK_MAX_DEPTH) {
            return Status::too_large;
        }
        out.push_back({Type::array, 0, static_cast<std::uint32_t>(v), 0});
        for (std::int64_t i = 0; i < v; ++i) {
            const Status s = value(depth + 1, out);
            if (s != Status::ok) return s;
        }
        return Status::ok;
    }

    const std::uint8_t* b_;
    std::size_t n_;
    std::size_t capacity_;
    std::size_t pos_ = 0;
};

// Index after the subtree rooted at values[i], or `count + 1` when the values do not form one.
std::size_t subtree(const Reply& r, std::size_t i, std::uint32_t depth) {
    if (i >= r.count) return r.count + 1;
    const Value& v = r.values[i++];
    if (!v.is(Type::array)) return i;
    FUZZ_CHECK(depth < RESPLOCK_MAX_DEPTH);
    FUZZ_CHECK(v.size <= RESPLOCK_MAX_ARRAY_ELEMENTS);
    for (std::uint32_t k = 0; k < v.size && i <= r.count; ++k)
        i = subtree(r, i, depth + 1);
    return i;
}

// What must hold of any ok result, whatever the model says.
Outcome checked_ok(const Parser& p, const char* buf, std::size_t len, std::size_t capacity) {
    Outcome o;
    o.status = Status::ok;
    o.consumed = p.consumed();
    FUZZ_CHECK(o.consumed >= 3 && o.consumed <= len);  // the shortest reply is "+\r\n"
    const Reply r = p.reply();
    FUZZ_CHECK(r.count >= 1 && r.count <= capacity);
    FUZZ_CHECK(subtree(r, 0, 0) == r.count);
    const char* end = buf + o.consumed;
    for (std::size_t i = 0; i < r.count; ++i) {
        const Value& v = r.values[i];
        const bool has_payload = v.is(Type::simple_string) || v.is(Type::error) ||
                                 v.is(Type::integer) || v.is(Type::bulk_string);
        if (has_payload) {
            // Inside the consumed bytes, after a type byte, and followed by its CR LF.
            FUZZ_CHECK(v.data != nullptr && v.data > buf && v.data <= end);
            FUZZ_CHECK(v.size <= static_cast<std::size_t>(end - v.data));
            FUZZ_CHECK(static_cast<std::size_t>(end - v.data) - v.size >= 2);
            FUZZ_CHECK(v.data[v.size] == '\r' && v.data[v.size + 1] == '\n');
            o.items.push_back({v.type, static_cast<std::size_t>(v.data - buf), v.size, v.integer});
        } else {
            FUZZ_CHECK(v.is(Type::array) || v.is(Type::nil_bulk) || v.is(Type::nil_array));
            FUZZ_CHECK(v.data == nullptr);
            FUZZ_CHECK(v.is(Type::array) || v.size == 0);
            o.items.push_back({v.type, 0, v.size, v.integer});
        }
        if (!v.is(Type::integer)) FUZZ_CHECK(v.integer == 0);
    }
    return o;
}

// Chunk sizes for feeding: 0 whole, 1 byte at a time, else pseudo-random sizes in 1..max.
struct Splitter {
    std::size_t max;
    std::uint32_t state;
    std::size_t next(std::size_t left) {
        if (max == 0) return left;
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        const std::size_t n = 1 + state % max;
        return n < left ? n : left;
    }
};

// Feeds data[0..len) into `buf` (exactly len bytes) in the chunks `split` chooses, calling
// parse() on the growing prefix after each, as Connection does.
Outcome feed(Parser& p, const std::uint8_t* data, std::size_t len, std::vector<char>& buf,
             Splitter split, std::size_t capacity) {
    p.reset();
    for (std::size_t i = 0; i < len; ++i)
        buf[i] = i % 2 == 0 ? '\r' : '\n';  // stale bytes, like an old request in the buffer
    std::size_t used = 0;
    Status s = Status::incomplete;
    while (s == Status::incomplete && used < len) {
        const std::size_t n = split.next(len - used);
        std::memcpy(buf.data() + used, data + used, n);
        used += n;
        FUZZ_POISON(buf.data() + used, len - used);
        s = p.parse(buf.data(), used);
        FUZZ_UNPOISON(buf.data() + used, len - used);
        FUZZ_CHECK(s == Status::ok || s == Status::incomplete || s == Status::protocol_error ||
                   s == Status::too_large);
    }
    Outcome o;
    o.status = s;
    if (s == Status::ok) o = checked_ok(p, buf.data(), used, capacity);
    // A finished parse sticks, even when called again with more bytes.
    if (s != Status::incomplete) {
        FUZZ_POISON(buf.data() + used, len - used);
        FUZZ_CHECK(p.parse(buf.data(), used) == s);
        FUZZ_UNPOISON(buf.data() + used, len - used);
        std::memcpy(buf.data() + used, data + used, len - used);
        FUZZ_CHECK(p.parse(buf.data(), len) == s);
        if (s == Status::ok) FUZZ_CHECK(checked_ok(p, buf.data(), len, capacity) == o);
    }
    return o;
}

void check_capacity(const std::uint8_t* data, std::size_t len, std::size_t capacity,
                    std::uint32_t seed) {
    // Exactly sized, so a write past `capacity` values is caught under ASan.
    std::vector<Value> values(capacity);
    Parser parser(values.data(), capacity);
    std::vector<char> buf(len);
    const Outcome model = Model(data, len, capacity).run();
    const Splitter splits[] = {{0, seed}, {1, seed}, {7, seed ^ 0x9e3779b9U}, {61, seed | 1U}};
    for (const Splitter& split : splits) {
        const Outcome got = feed(parser, data, len, buf, split, capacity);
        FUZZ_CHECK(got.status == model.status);
        FUZZ_CHECK(got.consumed == model.consumed);
        FUZZ_CHECK(got.items == model.items);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        Value v[1];
        Parser p(v, 1);
        FUZZ_CHECK(p.parse(nullptr, 0) == Status::incomplete);
        return 0;
    }
    std::uint32_t seed = 2166136261U;  // FNV-1a of the input: splits vary with it, reproducibly
    for (std::size_t i = 0; i < size; ++i)
        seed = (seed ^ data[i]) * 16777619U;
    if (seed == 0) seed = 1;
    check_capacity(data, size, RESPLOCK_MAX_REPLY_VALUES, seed);  // what Connection uses
    check_capacity(data, size, 64, seed);                         // room for deep nesting
    return 0;
}
