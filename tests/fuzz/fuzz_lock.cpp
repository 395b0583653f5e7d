// Fuzz target for Lock and Connection over the mock port, with the server played by the input.
// The input is read as the calls go: four bytes of configuration, then operations (acquire,
// try_acquire, release, extend, query, adopt, the same calls with AcquireOptions, clock steps,
// close, random failure); whenever the library connects, sends or receives with nothing scripted,
// the next bytes say what the server does (connect result, a failed send, a reply chunk, a
// timeout, a delay, a close: see fuzz_server.hpp). Requests are accepted whatever they hold and
// recorded, so each result can be checked against the exact bytes the server sent for that
// request. The fake clock only moves by timeouts, delays and sleeps, and every scripted event
// consumes input, so no loop can outlive the input.
//
// Input format (tests/fuzz/make_corpus.py writes seeds in it):
//   config   4 bytes: flags (1 password, 2 user name, 4 SELECT 3), timeout (1 + 20 * b ms),
//            buffer (64, 200, lock_buffer_min(), lock_options_buffer_min() by b % 4), key length
//            (b % 131; 0 and
//            over 128 are invalid)
//   op       b % 8: 0 acquire TTL; 1 try_acquire TTL WAIT (4 * b ms); 2 release; 3 extend TTL;
//            4 query; 5 adopt LEN BYTES; 6 advance the clock by u16 << (b >> 3 & 7) ms;
//            7 by b >> 4: 1 acquire OPTS TTL, 2 try_acquire OPTS TTL WAIT, 3 release OPTS (the
//            calls with AcquireOptions); otherwise close the connection (b & 8) or toggle random
//            failure
//   OPTS     b: 1 fence, 2 wake, 4 no fence pointer (null), b >> 3 & 3: once_per_ms 0, u16 that
//            follows, max_ttl_ms, max_ttl_ms + 1
//   TTL      u16 little-endian; 0xfff8.. pick 0, 1, 2, 3, max-1, max, max+1, 2^32-1
// The server's events (connect, send, recv) are described in fuzz_server.hpp.
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
#include "resplock/core/lock_options.hpp"
#include "resplock/ports/mock.hpp"

using resplock::AcquireOptions;
using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::LockInfo;
using resplock::LockState;
using resplock::Status;
using resplock::mock::MockPort;

namespace {

using fuzz::common;
using fuzz::Exchange;
using fuzz::Input;
using fuzz::integer_reply;
using fuzz::one_of;
using fuzz::read_ttl;
using fuzz::script_request;
using fuzz::starts;
using fuzz::Wire;

// What a lock may believe: the ttl and end time of the last call that confirmed it.
struct Lease {
    bool valid = false;
    std::uint32_t ttl = 0;
    std::uint32_t confirmed_by = 0;  // clock when that call returned: the request went out before
};

struct Harness {
    Input in;
    MockPort mock;
    Wire wire;
    resplock_port_t port;
    ConnectionConfig config;
    std::vector<char> buf;
    std::string key;
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
        config.timeout_ms = 1 + 20U * in.byte();
        // The last one holds the options' longest request (the acquire script's EVAL).
        const std::size_t sizes[] = {64, 200, resplock::lock_buffer_min(),
                                     resplock::lock_options_buffer_min()};
        buf.resize(sizes[in.byte() % 4]);  // exactly sized: ASan sees any overrun
        key.assign(in.byte() % 131, 'k');
    }

    void check_after(Connection& conn, Lock& lock) {
        const std::string_view err = conn.error_text();
        if (!err.empty()) {
            FUZZ_CHECK(err.data() >= buf.data() &&
                       err.data() + err.size() <= buf.data() + buf.size());
        }
        const std::uint32_t remaining = lock.remaining_ms();
        FUZZ_CHECK(lock.held() == (remaining > 0));
        if (!lock.held()) return;
        // Held only after a confirmation, and never longer than it allows.
        FUZZ_CHECK(lease.valid);
        FUZZ_CHECK(remaining <= lease.ttl);
        const std::int64_t elapsed = static_cast<std::uint32_t>(mock.now_ms - lease.confirmed_by);
        const std::int64_t bound = std::int64_t{lease.ttl} - lease.ttl / 100 - 2 - elapsed;
        FUZZ_CHECK(remaining <= bound);
        FUZZ_CHECK(!lock.token().empty());
    }

    // Checks common to the calls that send one request and get a status back.
    void check_sent(Connection& conn, Status s) {
        if (one_of(s, {Status::timeout, Status::closed, Status::io_error})) {
            FUZZ_CHECK(!conn.request_sent());  // after a request went out it is unknown_outcome
        }
        if (s == Status::unknown_outcome) FUZZ_CHECK(conn.request_sent());
    }

    void check_acquired(Status s, Lock& lock, std::uint32_t ttl, std::uint32_t requests_before) {
        if (s == Status::ok) {
            // The SET was the last request, with this token, and the server said exactly OK.
            FUZZ_CHECK(Wire::is_set(wire.request));
            FUZZ_CHECK(lock.token().size() == resplock::token_len);
            FUZZ_CHECK(wire.request.find(lock.token()) != std::string::npos);
            FUZZ_CHECK(wire.reply == "+OK\r\n");
            lease = {true, ttl, mock.now_ms};
        } else if (s == Status::busy) {
            // The last attempt got a nil (try_acquire may have asked who holds it after it).
            FUZZ_CHECK(wire.requests != requests_before);
            FUZZ_CHECK(wire.last_set_reply() == "$-1\r\n");
        }
        if (s != Status::ok && s != Status::invalid_argument) lease.valid = false;
    }

    // release/extend: ok only on integer 1, not_owner on -1 or WRONGTYPE, expired on 0.
    void check_owner(Status s, char argc, std::string_view token, std::uint32_t requests_before) {
        long long v = 0;
        const bool integer = integer_reply(wire.reply, &v);
        const bool sent = wire.requests != requests_before;
        if (s == Status::ok || s == Status::not_owner || (s == Status::expired && sent)) {
            FUZZ_CHECK(sent);
            FUZZ_CHECK(script_request(wire.request, argc));
            FUZZ_CHECK(wire.request.find(token) != std::string::npos);
        }
        if (s == Status::ok) FUZZ_CHECK(integer && v == 1);
        if (s == Status::expired && sent) FUZZ_CHECK(integer && v == 0);
        if (s == Status::not_owner) {
            FUZZ_CHECK((integer && v == -1) || starts(wire.reply, "-WRONGTYPE"));
        }
        if (one_of(s, {Status::ok, Status::not_owner, Status::expired})) lease.valid = false;
    }

    // AcquireOptions from an OPTS byte (and the u16 interval that may follow it).
    AcquireOptions read_options(bool* null_fence) {
        const std::uint8_t b = in.byte();
        AcquireOptions o;
        o.fence = (b & 1) != 0;
        o.wake = (b & 2) != 0;
        *null_fence = (b & 4) != 0;
        switch (b >> 3 & 3) {
            case 1:
                o.once_per_ms = in.u16();
                break;
            case 2:
                o.once_per_ms = resplock::max_ttl_ms;
                break;
            case 3:
                o.once_per_ms = resplock::max_ttl_ms + 1;
                break;
            default:
                break;
        }
        return o;
    }

    // Whether `r` is the acquire script (EVALSHA, or EVAL after NOSCRIPT) for these options, with
    // KEY's companion key with `suffix` (companion_prefix: in KEY's cluster slot).
    std::string companion(const char* suffix) const {
        std::vector<char> out(key.size() + resplock::companion_prefix_extra);
        const std::size_t n = resplock::companion_prefix(key, out.data());
        return std::string(out.data(), n) + suffix;
    }

    // `token` and `ttl`: KEYS = key [, key:once] [, key:fence], ARGV = token, ttl [, once_per_ms].
    bool acquire_request(const std::string& r, const AcquireOptions& o, std::string_view token,
                         std::uint32_t ttl) const {
        const std::vector<std::string> a = fuzz::arguments(r);
        const bool once = o.once_per_ms != 0;
        std::vector<std::string> want = {std::to_string(1 + (once ? 1 : 0) + (o.fence ? 1 : 0)),
                                         key};
        if (once) want.push_back(companion(":once"));
        if (o.fence) want.push_back(companion(":fence"));
        want.emplace_back(token);
        want.push_back(std::to_string(ttl));
        if (once) want.push_back(std::to_string(o.once_per_ms));
        return a.size() == 2 + want.size() && (a[0] == "EVALSHA" || a[0] == "EVAL") &&
               std::vector<std::string>(a.begin() + 2, a.end()) == want;
    }

    // The number in a fence reply: a bulk string that is exactly the received bytes (its length as
    // the parser reads it, zero-padded or not), holding the
    // plain decimal form (no sign, no leading zero) of 1..INT64_MAX.
    static bool fence_reply(const std::string& r, std::uint64_t* number) {
        if (!starts(r, "$") || r.size() < 4 || r.compare(r.size() - 2, 2, "\r\n") != 0) {
            return false;
        }
        const std::size_t head = r.find("\r\n");
        if (head == std::string::npos || head + 4 > r.size()) return false;
        const std::string digits = r.substr(head + 2, r.size() - head - 4);
        // The length as the parser reads it: 1 to 19 digits, zero padding allowed.
        const std::string length = r.substr(1, head - 1);
        if (length.empty() || length.size() > 19 ||
            length.find_first_not_of("0123456789") != std::string::npos ||
            std::strtoull(length.c_str(), nullptr, 10) != digits.size() || digits.empty() ||
            digits.size() > 19 || digits.find_first_not_of("0123456789") != std::string::npos) {
            return false;
        }
        const unsigned long long n = std::strtoull(digits.c_str(), nullptr, 10);
        if (n < 1 || n > 9223372036854775807ULL || std::to_string(n) != digits) return false;
        *number = n;
        return true;
    }

    // The PTTL of a busy reply of the acquire script ({PTTL}), exactly the received bytes.
    static bool busy_reply(const std::string& r, long long* pttl) {
        return starts(r, "*1\r\n") && integer_reply(r.substr(4), pttl);
    }

    // Lock::acquire / try_acquire with options (`wait` < 0: acquire).
    void check_options_acquired(Status s, Lock& lock, const AcquireOptions& o, bool null_fence,
                                std::uint64_t fence, std::uint32_t ttl, std::int64_t wait,
                                std::uint32_t start, std::uint32_t requests_before) {
        const bool script = o.fence || o.once_per_ms != 0 || (wait >= 0 && o.wake);
        if (!script) {
            // The plain calls: the same checks as theirs.
            check_acquired(s, lock, ttl, requests_before);
            FUZZ_CHECK(fence == 0xfeedU);
            return;
        }
        const bool valid_ttl = ttl >= 1 && ttl <= resplock::max_ttl_ms;
        if ((o.fence && null_fence) || o.once_per_ms > resplock::max_ttl_ms || !valid_ttl ||
            key.empty() || key.size() > RESPLOCK_MAX_KEY_LEN) {
            FUZZ_CHECK(s == Status::invalid_argument);
            FUZZ_CHECK(wire.requests == requests_before);
        }
        // A fence number only with a grant.
        if (s != Status::ok || !o.fence) FUZZ_CHECK(fence == 0xfeedU);
        long long v = 0;
        if (s == Status::ok) {
            // The last request was the acquire script with this token, and its answer exactly a
            // fence number of 1..INT64_MAX in a bulk string (with a fence) or integer 0 (without).
            FUZZ_CHECK(lock.token().size() == resplock::token_len);
            FUZZ_CHECK(acquire_request(wire.request, o, lock.token(), ttl));
            if (o.fence) {
                std::uint64_t n = 0;
                FUZZ_CHECK(fence_reply(wire.reply, &n) && fence == n);
            } else {
                FUZZ_CHECK(integer_reply(wire.reply, &v) && v == 0);
            }
            lease = {true, ttl, mock.now_ms};
        } else if (s == Status::busy) {
            FUZZ_CHECK(wire.requests != requests_before);
            FUZZ_CHECK(fuzz::arguments(wire.request).size() >= 2);
            FUZZ_CHECK(busy_reply(wire.reply, &v));
        }
        if (s == Status::unknown_outcome) {
            // The token of the request whose reply was lost is kept, with no validity.
            FUZZ_CHECK(!lock.held() && !lock.token().empty());
            FUZZ_CHECK(wire.request.find(lock.token()) != std::string::npos);
        }
        if (s != Status::ok && s != Status::invalid_argument) lease.valid = false;
        if (wait < 0) return;
        // Waking: a BLPOP on key:wake only when asked to wake, for at least 1 ms, and only when
        // the pause plus Redis's 100 ms tick stays within the wait and the holder's last PTTL.
        const auto deadline = static_cast<std::uint32_t>(start + static_cast<std::uint32_t>(wait));
        long long holder = -1;
        std::uint32_t attempt_end = start;
        for (const Exchange& e : wire.log) {
            const std::vector<std::string> a = fuzz::arguments(e.request);
            long long pttl = 0;
            if (!a.empty() && (a[0] == "EVALSHA" || a[0] == "EVAL") && !e.reply.empty()) {
                attempt_end = e.replied_at;
                if (busy_reply(e.reply, &pttl)) holder = pttl;
            }
            if (a.empty() || a[0] != "BLPOP") continue;
            FUZZ_CHECK(o.wake);
            FUZZ_CHECK(a.size() == 3 && a[1] == companion(":wake"));
            const std::string& t = a[2];
            const std::size_t dot = t.find('.');
            FUZZ_CHECK(dot != std::string::npos && dot > 0 && t.size() == dot + 4 &&
                       t.find_first_not_of("0123456789.") == std::string::npos);
            const long long ms = std::atoll(t.c_str()) * 1000 + std::atoll(t.c_str() + dot + 1);
            FUZZ_CHECK(ms >= 1);
            FUZZ_CHECK(ms + 100 <= static_cast<std::uint32_t>(deadline - attempt_end));
            if (holder >= 0) FUZZ_CHECK(ms + 100 <= holder);
        }
    }

    // The calls with AcquireOptions: 1 acquire, 2 try_acquire, 3 release.
    Status options_call(int which, Connection& conn, Lock& lock, std::uint32_t start,
                        std::uint32_t before, const std::string& token) {
        bool null_fence = false;
        const AcquireOptions o = read_options(&null_fence);
        std::uint64_t fence = 0xfeedU;
        std::uint64_t* const fence_out = null_fence ? nullptr : &fence;
        const auto elapsed = [&] { return static_cast<std::uint32_t>(mock.now_ms - start); };
        if (which == 3) {
            const Status s = lock.release(o);
            FUZZ_CHECK(common(s) || one_of(s, {Status::ok, Status::not_owner, Status::expired,
                                               Status::unknown_outcome}));
            FUZZ_CHECK(elapsed() <= config.timeout_ms);
            if (token.empty()) FUZZ_CHECK(s == Status::invalid_argument);
            check_sent(conn, s);
            // With wake: the release script (KEYS key, key:wake; ARGV token); else the plain one.
            check_owner(s, o.wake ? '6' : '5', token, before);
            if (o.wake && (s == Status::ok || s == Status::not_owner || s == Status::expired)) {
                const std::vector<std::string> a = fuzz::arguments(wire.request);
                FUZZ_CHECK(a.size() == 6 && a[2] == "2" && a[3] == key &&
                           a[4] == companion(":wake") && a[5] == token);
            }
            if (one_of(s, {Status::ok, Status::not_owner, Status::expired})) {
                FUZZ_CHECK(lock.token().empty());
            }
            FUZZ_CHECK(!lock.held());
            return s;
        }
        const std::uint32_t ttl = read_ttl(in);
        const std::int64_t wait = which == 2 ? std::int64_t{4} * in.byte() : -1;
        const Status s = which == 2
                             ? lock.try_acquire(ttl, static_cast<std::uint32_t>(wait), o, fence_out)
                             : lock.acquire(ttl, o, fence_out);
        FUZZ_CHECK(common(s) || one_of(s, {Status::ok, Status::busy, Status::random_failed,
                                           Status::unknown_outcome}));
        // One attempt within the timeout; a wait within itself plus one attempt.
        FUZZ_CHECK(elapsed() <= (wait < 0 ? 0 : wait) + config.timeout_ms);
        check_sent(conn, s);
        check_options_acquired(s, lock, o, null_fence, fence, ttl, wait, start, before);
        return s;
    }

    void run() {
        Connection conn(port, config, buf.data(), buf.size());
        Lock lock(conn, key);
        // RESPLOCK_FUZZ_TRACE=1 prints each operation's status: to read a seed or a crash input.
        static const bool trace = std::getenv("RESPLOCK_FUZZ_TRACE") != nullptr;
        Status last = Status::ok;
        while (!in.empty()) {
            const std::uint8_t op = in.byte();
            last = Status::ok;
            const std::uint32_t start = mock.now_ms;
            const std::uint32_t before = wire.requests;
            const std::string token(lock.token());
            wire.log.clear();
            switch (op % 8) {
                case 0: {
                    const std::uint32_t ttl = read_ttl(in);
                    const Status s = last = lock.acquire(ttl);
                    FUZZ_CHECK(common(s) ||
                               one_of(s, {Status::ok, Status::busy, Status::random_failed,
                                          Status::unknown_outcome}));
                    FUZZ_CHECK(static_cast<std::uint32_t>(mock.now_ms - start) <=
                               config.timeout_ms);
                    check_sent(conn, s);
                    check_acquired(s, lock, ttl, before);
                    break;
                }
                case 1: {
                    const std::uint32_t ttl = read_ttl(in);
                    const std::uint32_t wait = 4U * in.byte();
                    const Status s = last = lock.try_acquire(ttl, wait);
                    FUZZ_CHECK(common(s) ||
                               one_of(s, {Status::ok, Status::busy, Status::random_failed,
                                          Status::unknown_outcome}));
                    // Documented: within the wait plus one call.
                    FUZZ_CHECK(static_cast<std::uint32_t>(mock.now_ms - start) <=
                               wait + config.timeout_ms);
                    check_sent(conn, s);
                    check_acquired(s, lock, ttl, before);
                    break;
                }
                case 2: {
                    const Status s = last = lock.release();
                    FUZZ_CHECK(common(s) || one_of(s, {Status::ok, Status::not_owner,
                                                       Status::expired, Status::unknown_outcome}));
                    FUZZ_CHECK(static_cast<std::uint32_t>(mock.now_ms - start) <=
                               config.timeout_ms);
                    if (token.empty()) FUZZ_CHECK(s == Status::invalid_argument);
                    check_sent(conn, s);
                    check_owner(s, '5', token, before);
                    if (one_of(s, {Status::ok, Status::not_owner, Status::expired})) {
                        FUZZ_CHECK(lock.token().empty());
                    }
                    break;
                }
                case 3: {
                    const std::uint32_t ttl = read_ttl(in);
                    const Status s = last = lock.extend(ttl);
                    FUZZ_CHECK(common(s) || one_of(s, {Status::ok, Status::not_owner,
                                                       Status::expired, Status::unknown_outcome}));
                    FUZZ_CHECK(static_cast<std::uint32_t>(mock.now_ms - start) <=
                               config.timeout_ms);
                    check_sent(conn, s);
                    check_owner(s, '6', token, before);
                    if (s == Status::ok) {
                        FUZZ_CHECK(wire.request.find("\r\n" + std::to_string(ttl) + "\r\n") !=
                                   std::string::npos);
                        lease = {true, ttl, mock.now_ms};
                    }
                    break;
                }
                case 4: {
                    LockInfo info;
                    const Status s = last = lock.query(info);
                    FUZZ_CHECK(common(s) || s == Status::ok);
                    FUZZ_CHECK(static_cast<std::uint32_t>(mock.now_ms - start) <=
                               config.timeout_ms);
                    if (s == Status::ok) {
                        FUZZ_CHECK(script_request(wire.request, '4'));
                        FUZZ_CHECK(starts(wire.reply, "*2\r\n"));
                        if (info.state == LockState::held_by_me) {
                            FUZZ_CHECK(!token.empty() &&
                                       wire.reply.find(token) != std::string::npos);
                        }
                        if (info.state == LockState::free) FUZZ_CHECK(info.ttl_ms == -2);
                    }
                    break;
                }
                case 5: {
                    const std::string_view t = in.bytes(in.byte() % 48);
                    const Status s = last = lock.adopt(t);
                    FUZZ_CHECK(s == Status::ok || s == Status::invalid_argument);
                    FUZZ_CHECK((s == Status::ok) ==
                               (!t.empty() && t.size() <= resplock::max_token_len));
                    if (s == Status::ok) {
                        FUZZ_CHECK(lock.token() == t && !lock.held());
                        lease.valid = false;
                    }
                    break;
                }
                case 6:
                    mock.advance(in.u16() << (op >> 3 & 7));
                    break;
                default:
                    if (op >> 4 >= 1 && op >> 4 <= 3) {
                        last = options_call(op >> 4, conn, lock, start, before, token);
                    } else if ((op & 8) != 0) {
                        conn.close();
                    } else {
                        mock.random_fails = !mock.random_fails;
                    }
            }
            if (trace) {
                // The calls with options show as op 7.1 (acquire), 7.2 and 7.3.
                const int with_options = op % 8 == 7 && op >> 4 >= 1 && op >> 4 <= 3 ? op >> 4 : 0;
                std::fprintf(stderr, "op %d%s%.0d: %s, held %d, clock +%u\n", op % 8,
                             with_options != 0 ? "." : "", with_options, resplock::to_string(last),
                             lock.held() ? 1 : 0, static_cast<unsigned>(mock.now_ms - start));
            }
            check_after(conn, lock);
        }
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Harness h(data, size);
    h.run();
    return 0;
}
