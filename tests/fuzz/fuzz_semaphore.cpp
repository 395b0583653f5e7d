// Fuzz target for Semaphore over the mock port, plain and fair, limits 1 and 3, with the server
// played by the input. The input is read as the calls go: four bytes of configuration, then
// operations (acquire, try_acquire, release, extend, query, holders, adopt, set_owner, clock
// steps, close, random failure); whenever the library connects, sends or receives with nothing
// scripted, the next bytes say what the server does (see fuzz_server.hpp). Every request is
// recorded with the exact bytes received for it, so each result is checked against them: a lease
// only from a well-formed grant of the script (or a hand-off pushed to the waiter's own list),
// validity never beyond the TTL asked, each status in the set the header documents, holders'
// labels no longer than max_owner_len, every call within its time bound.
//
// Input format (tests/fuzz/make_corpus.py writes seeds in it):
//   config   4 bytes: flags (1 password, 2 user name, 4 SELECT 3, 8 fair mode; b >> 4 & 3: limit
//            1, 3, 1, 0 (refused)), timeout (1 + 20 * b ms), buffer (64, 200, lock_buffer_min(),
//            semaphore_buffer_min() by b % 4), key length (b % 131; 0 and over 128 are invalid)
//   op       b % 8: 0 acquire TTL; 1 try_acquire TTL WAIT (4 * b ms) (both: b & 8 gives a null
//            fence pointer); 2 release; 3 extend TTL; 4 query; 5 holders; 6 advance the clock by
//            u16 << (b >> 3 & 7) ms; 7 by b >> 4: 1 adopt LEN BYTES (LEN b % 80), 2 set_owner
//            LEN BYTES (LEN b % 40); otherwise close the connection (b & 8) or toggle random
//            failure
//   TTL      u16 little-endian; 0xfff8.. pick 0, 1, 2, 3, max-1, max, max+1, 2^32-1
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_server.hpp"
#include "resplock/core/companion.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/mock.hpp"
#include "resplock/variants/semaphore.hpp"

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Semaphore;
using resplock::SemaphoreHolder;
using resplock::SemaphoreInfo;
using resplock::Status;
using resplock::mock::MockPort;

namespace {

using fuzz::common;
using fuzz::Exchange;
using fuzz::Input;
using fuzz::integer_reply;
using fuzz::one_of;
using fuzz::read_ttl;
using fuzz::starts;
using fuzz::Wire;

// How late after the caller's wait an attempt may still start (retry.hpp's late_wake_ms), and
// how many leases holders() reads per round trip.
constexpr std::uint32_t late_wake_ms = 5;
constexpr std::size_t page = (RESPLOCK_MAX_REPLY_VALUES - 1) / 2;

// What a semaphore may believe: the TTL of the last call that confirmed its lease and when that
// call returned (its request went out before).
struct Lease {
    bool valid = false;
    std::uint32_t ttl = 0;
    std::uint32_t confirmed_by = 0;
};

// RESP read back from the exact bytes received, as leniently as the library's parser reads it
// (leading zeros in a length or an integer are fine): the header of type `type` at `pos` of `r`
// (an integer of 1 to 19 digits, a '-' before it allowed), and `pos` moved past it.
bool header_at(const std::string& r, std::size_t& pos, char type, long long* n) {
    if (pos >= r.size() || r[pos] != type) return false;
    const std::size_t end = r.find("\r\n", pos);
    if (end == std::string::npos) return false;
    std::string digits = r.substr(pos + 1, end - pos - 1);
    const bool negative = !digits.empty() && digits[0] == '-';
    if (negative) digits.erase(0, 1);
    if (digits.empty() || digits.size() > 19 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
        return false;
    }
    const unsigned long long v = std::strtoull(digits.c_str(), nullptr, 10);
    if (v > 9223372036854775807ULL) return false;
    *n = negative ? -static_cast<long long>(v) : static_cast<long long>(v);
    pos = end + 2;
    return true;
}

// A bulk string at `pos` of `r`: its payload, and `pos` moved past it.
bool bulk_at(const std::string& r, std::size_t& pos, std::string* payload) {
    long long len = 0;
    std::size_t p = pos;
    if (!header_at(r, p, '$', &len) || len < 0 || len > 65536) return false;
    const auto n = static_cast<std::size_t>(len);
    if (p + n + 2 > r.size() || r.compare(p + n, 2, "\r\n") != 0) return false;
    *payload = r.substr(p, n);
    pos = p + n + 2;
    return true;
}

// An integer at `pos` of `r`, and `pos` moved past it.
bool integer_at(const std::string& r, std::size_t& pos, long long* value) {
    return header_at(r, pos, ':', value);
}

// An array header of exactly `n` elements at the start of `r`; `pos` moved past it.
bool array_of(const std::string& r, long long n, std::size_t& pos) {
    long long count = 0;
    pos = 0;
    return header_at(r, pos, '*', &count) && count == n;
}

// A fencing number as the script sends it: 1 to 19 digits, no leading zero, 1..INT64_MAX.
bool fence_digits(const std::string& d, std::uint64_t* number) {
    if (d.empty() || d.size() > 19 || d[0] == '0' ||
        d.find_first_not_of("0123456789") != std::string::npos) {
        return false;
    }
    const unsigned long long n = std::strtoull(d.c_str(), nullptr, 10);
    if (n > 9223372036854775807ULL) return false;
    *number = n;
    return true;
}

// A grant of the script, exactly the received bytes: {fence, ms} with a fencing number and
// 1..ttl ms left (a lease just granted or handed over for this TTL never has more); *ms the ms.
bool grant_reply(const std::string& r, std::uint32_t ttl, std::uint64_t* number, long long* ms) {
    std::size_t pos = 0;
    std::string digits;
    return array_of(r, 2, pos) && bulk_at(r, pos, &digits) && fence_digits(digits, number) &&
           integer_at(r, pos, ms) && pos == r.size() && *ms >= 1 && *ms <= ttl;
}

// A busy answer of the script, exactly: an integer, the ms until the earliest lease ends, or -1.
bool busy_reply(const std::string& r, long long* ms) {
    std::size_t pos = 0;
    return integer_at(r, pos, ms) && pos == r.size() && *ms >= -1;
}

struct Harness {
    Input in;
    MockPort mock;
    Wire wire;
    resplock_port_t port;
    ConnectionConfig config;
    std::vector<char> buf;
    std::string key;
    std::uint32_t limit = 1;
    bool fair = false;
    Lease lease;

    Harness(const std::uint8_t* data, std::size_t size) : in(data, size) {
        mock.accept_any_send = true;
        mock.on_empty(fuzz::refill, &in);
        wire.inner = mock.port();
        port = wire.port();
        const std::uint8_t flags = in.byte();
        if ((flags & 1) != 0) config.password = "secret";
        if ((flags & 3) == 3) config.username = "fuzz";
        if ((flags & 4) != 0) config.db = 3;
        fair = (flags & 8) != 0;
        const std::uint32_t limits[] = {1, 3, 1, 0};
        limit = limits[flags >> 4 & 3];
        config.timeout_ms = 1 + 20U * in.byte();
        // The last one holds the script's longest request (its EVAL at the longest key).
        const std::size_t sizes[] = {64, 200, resplock::lock_buffer_min(),
                                     resplock::semaphore_buffer_min()};
        buf.resize(sizes[in.byte() % 4]);  // exactly sized: ASan sees any overrun
        key.assign(in.byte() % 131, 'k');
    }

    bool valid_key() const { return !key.empty() && key.size() <= RESPLOCK_MAX_KEY_LEN; }
    bool valid() const { return valid_key() && limit >= 1; }

    // BASE:suffix, as the semaphore names its companion keys (companion_prefix: KEY's slot).
    std::string companion(const std::string& suffix) const {
        std::vector<char> out(key.size() + resplock::companion_prefix_extra);
        const std::size_t n = resplock::companion_prefix(key, out.data());
        return std::string(out.data(), n) + suffix;
    }

    // Whether `r` is the script (EVALSHA, or EVAL after NOSCRIPT) with operation `op` for
    // `token`, with `ttl` (nullptr: any) and this semaphore's key, companions and limit.
    bool script_request(const std::string& r, char op, std::string_view token,
                        const std::string* ttl) const {
        const std::vector<std::string> a = fuzz::arguments(r);
        return a.size() == 14 && (a[0] == "EVALSHA" || a[0] == "EVAL") && a[2] == "5" &&
               a[3] == key && a[4] == companion(":fence") && a[5] == companion(":wake") &&
               a[6] == companion(":q") && a[7] == companion(":w") && a[8] == std::string(1, op) &&
               a[9] == token && (ttl == nullptr || a[10] == *ttl) &&
               a[11] == std::to_string(limit) && a[13] == companion(":f:");
    }
    // The operation of a script request, or 0.
    static char script_op(const std::string& r) {
        const std::vector<std::string> a = fuzz::arguments(r);
        if (a.size() != 14 || (a[0] != "EVALSHA" && a[0] != "EVAL") || a[8].size() != 1) return 0;
        return a[8][0];
    }

    void check_after(Connection& conn, Semaphore& sem) {
        const std::string_view err = conn.error_text();
        if (!err.empty()) {
            FUZZ_CHECK(err.data() >= buf.data() &&
                       err.data() + err.size() <= buf.data() + buf.size());
        }
        FUZZ_CHECK(sem.token().size() <= resplock::max_token_len);
        const std::uint32_t remaining = sem.remaining_ms();
        FUZZ_CHECK(sem.held() == (remaining > 0));
        if (!sem.held()) return;
        // Held only after a confirmation, and never longer than the TTL it asked for allows.
        FUZZ_CHECK(lease.valid);
        FUZZ_CHECK(remaining <= lease.ttl);
        const std::int64_t elapsed = static_cast<std::uint32_t>(mock.now_ms - lease.confirmed_by);
        const std::int64_t bound = std::int64_t{lease.ttl} - lease.ttl / 100 - 2 - elapsed;
        FUZZ_CHECK(remaining <= bound);
        FUZZ_CHECK(!sem.token().empty());
    }

    // Checks common to the calls whose lost reply is an unknown outcome.
    void check_sent(Connection& conn, Status s) {
        if (one_of(s, {Status::timeout, Status::closed, Status::io_error})) {
            FUZZ_CHECK(!conn.request_sent());
        }
        if (s == Status::unknown_outcome) FUZZ_CHECK(conn.request_sent());
    }

    // acquire (wait < 0) and try_acquire.
    void check_acquired(Status s, Semaphore& sem, std::uint32_t ttl, std::int64_t wait,
                        bool null_fence, std::uint64_t fence, bool was_held,
                        const std::string& token_before, std::uint32_t start,
                        std::uint32_t requests_before) {
        const bool sent = wire.requests != requests_before;
        const bool valid_ttl = ttl >= 1 && ttl <= resplock::max_ttl_ms;
        if (!valid() || !valid_ttl || wait > resplock::max_ttl_ms || was_held) {
            FUZZ_CHECK(s == Status::invalid_argument);
        }
        if (s == Status::invalid_argument) FUZZ_CHECK(!sent);
        if (s != Status::ok || null_fence) FUZZ_CHECK(fence == 0xfeedU);
        const std::string token(sem.token());
        const bool queued = fair && wait > 0;
        if (s == Status::ok) {
            // The lease came from the last exchange: a grant of the script to this token, or a
            // hand-off pushed to this waiter's own list while it was queued.
            FUZZ_CHECK(sent && !wire.log.empty());
            FUZZ_CHECK(!token.empty() && token.size() <= resplock::max_token_len);
            const Exchange& e = wire.log.back();
            std::uint64_t number = 0;
            std::uint32_t granted = ttl;  // the validity's bound
            const std::string ttl_text = std::to_string(ttl);
            const std::vector<std::string> a = fuzz::arguments(e.request);
            if (!a.empty() && a[0] == "BLPOP") {
                FUZZ_CHECK(queued);
                FUZZ_CHECK(a.size() == 3 && a[1] == companion(":f:") + token);
                std::size_t pos = 0;
                FUZZ_CHECK(array_of(e.reply, 2, pos));
                std::string list;
                std::string digits;
                FUZZ_CHECK(bulk_at(e.reply, pos, &list) && list == a[1]);
                FUZZ_CHECK(bulk_at(e.reply, pos, &digits) && pos == e.reply.size());
                FUZZ_CHECK(fence_digits(digits, &number));
            } else {
                const char op = script_op(e.request);
                FUZZ_CHECK(op == 't' || (queued && (op == 'a' || op == 'l')));
                FUZZ_CHECK(script_request(e.request, op, token, op == 'l' ? nullptr : &ttl_text));
                long long ms = 0;
                FUZZ_CHECK(grant_reply(e.reply, ttl, &number, &ms));
                if (ms > ttl) granted = static_cast<std::uint32_t>(ms);  // see above
            }
            if (!null_fence) FUZZ_CHECK(fence == number);
            lease = {true, granted, mock.now_ms};
        } else if (s == Status::busy) {
            // The last attempt (or the leave of a queued waiter) was answered busy; no token.
            FUZZ_CHECK(sent && !wire.log.empty());
            const Exchange& e = wire.log.back();
            const char op = script_op(e.request);
            FUZZ_CHECK(op == 't' || (queued && (op == 'a' || op == 'l')));
            long long ms = 0;
            FUZZ_CHECK(busy_reply(e.reply, &ms));
            FUZZ_CHECK(token.empty());
        } else if (one_of(s, {Status::invalid_argument, Status::random_failed})) {
            FUZZ_CHECK(token == token_before);  // refused before anything changed
        } else if (!token.empty()) {
            // A token kept after a failure is the one a request carried (release may undo it).
            bool carried = false;
            for (const Exchange& e : wire.log) {
                if (e.request.find(token) != std::string::npos) carried = true;
            }
            FUZZ_CHECK(carried);
            FUZZ_CHECK(!sem.held());
        }
        if (s != Status::ok && s != Status::invalid_argument) lease.valid = false;
        if (wait < 0) return;
        // Blocks: on BASE:wake in the plain mode, on the waiter's own list in the fair one, at
        // least 1 ms, and only when the block plus Redis's 100 ms tick ends before the wait runs
        // out and before the earliest lease ends (the last busy answer).
        const auto deadline = static_cast<std::uint32_t>(start + static_cast<std::uint32_t>(wait));
        long long earliest = -1;
        std::uint32_t attempt_end = start;
        for (const Exchange& e : wire.log) {
            const std::vector<std::string> a = fuzz::arguments(e.request);
            const char op = script_op(e.request);
            long long ms = 0;
            if ((op == 't' || op == 'a') && !e.reply.empty()) {
                attempt_end = e.replied_at;
                earliest = busy_reply(e.reply, &ms) ? ms : -1;
            }
            if (a.empty() || a[0] != "BLPOP") continue;
            FUZZ_CHECK(a.size() == 3);
            if (queued) {
                FUZZ_CHECK(starts(a[1], companion(":f:")));
            } else {
                FUZZ_CHECK(a[1] == companion(":wake"));
            }
            const std::string& t = a[2];
            const std::size_t dot = t.find('.');
            FUZZ_CHECK(dot != std::string::npos && dot > 0 && t.size() == dot + 4 &&
                       t.find_first_not_of("0123456789.") == std::string::npos);
            const long long ms_blocked =
                std::atoll(t.c_str()) * 1000 + std::atoll(t.c_str() + dot + 1);
            FUZZ_CHECK(ms_blocked >= 1);
            FUZZ_CHECK(ms_blocked + 100 <= static_cast<std::uint32_t>(deadline - attempt_end));
            if (earliest >= 0) FUZZ_CHECK(ms_blocked + 100 <= earliest);
        }
    }

    // release / extend: ok only on integer 1 to this token's script, expired on 0 (or unsent).
    void check_owner(Status s, char op, const std::string& token, const std::string* ttl,
                     std::uint32_t requests_before) {
        const bool sent = wire.requests != requests_before;
        long long v = 0;
        const bool integer = integer_reply(wire.reply, &v);
        if (s == Status::ok || s == Status::not_owner || (s == Status::expired && sent)) {
            FUZZ_CHECK(sent);
            FUZZ_CHECK(script_request(wire.request, op, token, ttl));
        }
        if (s == Status::ok) FUZZ_CHECK(integer && v == 1);
        if (s == Status::expired && sent) FUZZ_CHECK(integer && v == 0);
        // The owner script's -1; the semaphore's script never answers it (semaphore.hpp does not
        // list not_owner), but an answer of -1 is read as it is for every lock kind.
        if (s == Status::not_owner) FUZZ_CHECK(integer && v == -1);
        if (one_of(s, {Status::ok, Status::not_owner, Status::expired})) lease.valid = false;
    }

    // query: ok only on exactly {count, ms or -2, waiters}, as read.
    void check_query(Status s, const Semaphore& sem, const SemaphoreInfo& info) {
        if (s != Status::ok) return;
        FUZZ_CHECK(script_request(wire.request, 'q', sem.token(), nullptr));
        std::size_t pos = 0;
        FUZZ_CHECK(array_of(wire.reply, 3, pos));
        long long v[3] = {};
        for (long long& x : v)
            FUZZ_CHECK(integer_at(wire.reply, pos, &x));
        FUZZ_CHECK(pos == wire.reply.size());
        FUZZ_CHECK(info.count == v[0] && info.waiters == v[2]);
        FUZZ_CHECK(info.mine == (v[1] >= 0 && !sem.token().empty()));
        FUZZ_CHECK(info.ttl_ms == (info.mine ? v[1] : -2));
        FUZZ_CHECK(info.ttl_ms >= -2 && info.ttl_ms <= resplock::max_ttl_ms);
    }

    // What holders() visited.
    struct Visits {
        std::size_t calls = 0;
        std::vector<std::string> labels;
    };
    static void visit(void* ctx, const SemaphoreHolder& h) noexcept {
        auto& v = *static_cast<Visits*>(ctx);
        FUZZ_CHECK(h.owner.size() <= resplock::max_owner_len);
        FUZZ_CHECK(h.remaining_ms <= resplock::max_ttl_ms);
        ++v.calls;
        v.labels.emplace_back(h.owner);
    }

    // holders: pages from position 0 on (a page asked again after NOSCRIPT), each exactly a flat
    // array of label and ms; ok only when every page was read, the last one short; each lease
    // visited is one the server listed, in its order.
    void check_holders(Status s, const Visits& visits, const std::string& token) {
        std::size_t listed = 0;
        std::size_t pages = 0;  // answered with an array
        bool short_page = false;
        std::vector<std::string> labels;
        for (const Exchange& e : wire.log) {
            if (script_op(e.request) != 'h') continue;
            const std::vector<std::string> a = fuzz::arguments(e.request);
            FUZZ_CHECK(script_request(e.request, 'h', token, nullptr));
            FUZZ_CHECK(a[10] == std::to_string(pages * page) && a[12] == std::to_string(page));
            std::size_t pos = 0;
            long long n = 0;
            if (!header_at(e.reply, pos, '*', &n)) continue;
            ++pages;
            for (long long i = 0; i + 1 < n && i < 2 * static_cast<long long>(page); i += 2) {
                std::string label;
                long long ms = 0;
                if (!bulk_at(e.reply, pos, &label) || !integer_at(e.reply, pos, &ms)) break;
                if (label.size() <= resplock::max_owner_len && ms >= 0 &&
                    ms <= resplock::max_ttl_ms) {
                    labels.push_back(label);
                }
            }
            if (n >= 0 && n % 2 == 0 && static_cast<std::size_t>(n) <= 2 * page) {
                listed += static_cast<std::size_t>(n) / 2;
                short_page = static_cast<std::size_t>(n) < 2 * page;
            }
        }
        FUZZ_CHECK(visits.calls <= labels.size());
        for (std::size_t i = 0; i < visits.calls; ++i)
            FUZZ_CHECK(visits.labels[i] == labels[i]);
        if (s == Status::ok) {
            FUZZ_CHECK(pages >= 1 && (short_page || pages * page > Semaphore::max_limit));
            FUZZ_CHECK(visits.calls == listed);
        }
    }

    void run() {
        Connection conn(port, config, buf.data(), buf.size());
        Semaphore sem(conn, key, limit, fair);
        FUZZ_CHECK(sem.key().empty() == !valid());
        FUZZ_CHECK(sem.limit() == (valid() ? limit : 0));
        // RESPLOCK_FUZZ_TRACE=1 prints each operation's status: to read a seed or a crash input.
        static const bool trace = std::getenv("RESPLOCK_FUZZ_TRACE") != nullptr;
        while (!in.empty()) {
            const std::uint8_t op = in.byte();
            Status last = Status::ok;
            const std::uint32_t start = mock.now_ms;
            const std::uint32_t before = wire.requests;
            const std::string token(sem.token());
            const bool was_held = sem.held();
            const auto elapsed = [&] { return static_cast<std::uint32_t>(mock.now_ms - start); };
            wire.log.clear();
            switch (op % 8) {
                case 0:
                case 1: {
                    const std::uint32_t ttl = read_ttl(in);
                    const std::int64_t wait = op % 8 == 1 ? std::int64_t{4} * in.byte() : -1;
                    const bool null_fence = (op & 8) != 0;
                    std::uint64_t fence = 0xfeedU;
                    std::uint64_t* const out = null_fence ? nullptr : &fence;
                    const Status s = last =
                        wait < 0 ? sem.acquire(ttl, out)
                                 : sem.try_acquire(ttl, static_cast<std::uint32_t>(wait), out);
                    FUZZ_CHECK(common(s) ||
                               one_of(s, {Status::ok, Status::busy, Status::random_failed,
                                          Status::unknown_outcome}));
                    // One attempt within the timeout; a wait within itself, an attempt that
                    // starts up to late_wake_ms after it, and a queued waiter's leave.
                    std::uint32_t bound = config.timeout_ms;
                    if (wait > 0) {
                        bound += static_cast<std::uint32_t>(wait) + late_wake_ms +
                                 (fair ? config.timeout_ms : 0);
                    }
                    FUZZ_CHECK(elapsed() <= bound);
                    check_sent(conn, s);
                    check_acquired(s, sem, ttl, wait, null_fence, fence, was_held, token, start,
                                   before);
                    break;
                }
                case 2: {
                    const Status s = last = sem.release();
                    FUZZ_CHECK(common(s) || one_of(s, {Status::ok, Status::not_owner,
                                                       Status::expired, Status::unknown_outcome}));
                    FUZZ_CHECK(elapsed() <= config.timeout_ms);
                    if (token.empty() || !valid()) FUZZ_CHECK(s == Status::invalid_argument);
                    check_sent(conn, s);
                    check_owner(s, 'r', token, nullptr, before);
                    if (one_of(s, {Status::ok, Status::not_owner, Status::expired})) {
                        FUZZ_CHECK(sem.token().empty());
                    } else if (s != Status::invalid_argument) {
                        FUZZ_CHECK(sem.token() == token);  // kept: the release can be retried
                    }
                    FUZZ_CHECK(!sem.held());
                    break;
                }
                case 3: {
                    const std::uint32_t ttl = read_ttl(in);
                    const Status s = last = sem.extend(ttl);
                    FUZZ_CHECK(common(s) || one_of(s, {Status::ok, Status::not_owner,
                                                       Status::expired, Status::unknown_outcome}));
                    FUZZ_CHECK(elapsed() <= config.timeout_ms);
                    if (token.empty() || !valid() || ttl < 1 || ttl > resplock::max_ttl_ms) {
                        FUZZ_CHECK(s == Status::invalid_argument);
                    }
                    check_sent(conn, s);
                    const std::string ttl_text = std::to_string(ttl);
                    check_owner(s, 'e', token, &ttl_text, before);
                    if (s == Status::ok) lease = {true, ttl, mock.now_ms};
                    break;
                }
                case 4: {
                    SemaphoreInfo info;
                    const Status s = last = sem.query(info);
                    FUZZ_CHECK(common(s) || s == Status::ok);
                    FUZZ_CHECK(elapsed() <= config.timeout_ms);
                    if (!valid()) FUZZ_CHECK(s == Status::invalid_argument);
                    check_query(s, sem, info);
                    break;
                }
                case 5: {
                    Visits visits;
                    const Status s = last = sem.holders(&Harness::visit, &visits);
                    FUZZ_CHECK(common(s) || s == Status::ok || s == Status::busy);
                    FUZZ_CHECK(elapsed() <= config.timeout_ms);
                    if (!valid()) FUZZ_CHECK(s == Status::invalid_argument);
                    check_holders(s, visits, token);
                    break;
                }
                case 6:
                    mock.advance(in.u16() << (op >> 3 & 7));
                    break;
                default:
                    if (op >> 4 == 1) {
                        const std::string_view t = in.bytes(in.byte() % 80);
                        const Status s = last = sem.adopt(t);
                        FUZZ_CHECK(s == Status::ok || s == Status::invalid_argument);
                        FUZZ_CHECK((s == Status::ok) ==
                                   (valid() && !t.empty() && t.size() <= resplock::max_token_len));
                        if (s == Status::ok) {
                            FUZZ_CHECK(sem.token() == t && !sem.held());
                            lease.valid = false;
                        }
                    } else if (op >> 4 == 2) {
                        const std::string_view o = in.bytes(in.byte() % 40);
                        const Status s = last = sem.set_owner(o);
                        bool label = o.size() <= resplock::max_owner_len;
                        for (const char c : o)
                            label = label && resplock::owner_label_char(c);
                        FUZZ_CHECK(s == (label ? Status::ok : Status::invalid_argument));
                        FUZZ_CHECK(sem.token() == token && sem.held() == was_held);
                    } else if ((op & 8) != 0) {
                        conn.close();
                    } else {
                        mock.random_fails = !mock.random_fails;
                    }
            }
            if (trace) {
                std::fprintf(stderr, "op %d: %s, held %d, clock +%u\n", op % 8,
                             resplock::to_string(last), sem.held() ? 1 : 0,
                             static_cast<unsigned>(elapsed()));
            }
            check_after(conn, sem);
        }
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Harness h(data, size);
    h.run();
    return 0;
}
