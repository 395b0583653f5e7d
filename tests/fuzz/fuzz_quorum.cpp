// Fuzz target for QuorumLock over three or five mock ports sharing one clock, every server played
// by the input. The input is read as the calls go: four bytes of configuration, then operations
// (acquire, try_acquire, release, extend, query, adopt, clock steps, closes, random failure);
// whenever the library connects, sends or receives on a server with nothing scripted, the next
// bytes say what that server does (see fuzz_server.hpp). Every request is recorded with what came
// back for it, on each server, so each result can be checked against the exact replies: held only
// when a majority answered OK to that very SET, validity counted from before the first send,
// the keys of a failed attempt taken back everywhere, every call within its bound.
//
// Input format (tests/fuzz/make_corpus.py writes seeds in it):
//   config   4 bytes: flags (1 five servers, else three; 2 password; 4 SELECT 3), timeout
//            (1 + 20 * b ms), buffer (64, 200, lock_buffer_min(), 512 by b % 4), key length
//            (b % 131; 0 and over 128 are invalid)
//   op       b % 8: 0 acquire TTL; 1 try_acquire TTL WAIT (4 * b ms); 2 release; 3 extend TTL
//            WAIT (4 * b ms, 255: none given); 4 query; 5 adopt LEN BYTES; 6 advance the clock
//            by u16 << (b >> 3 & 7) ms; 7 with b & 8: close every connection (b >> 4 == 0) or
//            server (b >> 4) - 1 modulo the count's, else toggle random failure (server 0's
//            port gives the tokens and the jitter)
//   TTL      u16 little-endian; 0xfff8.. pick 0, 1, 2, 3, max-1, max, max+1, 2^32-1
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_server.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/mock.hpp"
#include "resplock/variants/quorum_lock.hpp"

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::LockInfo;
using resplock::LockState;
using resplock::QuorumLock;
using resplock::Status;
using resplock::mock::MockPort;

namespace {

using fuzz::common;
using fuzz::Exchange;
using fuzz::Input;
using fuzz::one_of;
using fuzz::owner_request;
using fuzz::read_ttl;
using fuzz::Wire;

constexpr std::size_t max_servers = 5;

// Validity a TTL gives (ttl - ttl/100 - 2 ms; none within the drift allowance).
std::int64_t span(std::uint32_t ttl) {
    const std::int64_t s = std::int64_t{ttl} - ttl / 100 - 2;
    return s > 0 ? s : 0;
}

// What the lock may believe: the TTL of the last call that confirmed it, and when that call
// started (validity is counted from before its first send).
struct Lease {
    bool valid = false;
    std::uint32_t ttl = 0;
    std::uint32_t from = 0;
};

struct Harness {
    Input in;
    std::size_t n;
    fuzz::SharedClock clock;
    MockPort mocks[max_servers];
    Wire wires[max_servers];
    resplock_port_t ports[max_servers];
    std::vector<char> bufs[max_servers];
    ConnectionConfig config;
    std::optional<Connection> conns[max_servers];
    Connection* conn_list[max_servers] = {};
    std::string key;
    Lease lease;

    Harness(const std::uint8_t* data, std::size_t size) : in(data, size) {
        const std::uint8_t flags = in.byte();
        n = (flags & 1) != 0 ? 5 : 3;
        if ((flags & 2) != 0) config.password = "secret";
        if ((flags & 4) != 0) config.db = 3;
        config.timeout_ms = 1 + 20U * in.byte();
        const std::size_t sizes[] = {64, 200, resplock::lock_buffer_min(), 512};
        const std::size_t buf_size = sizes[in.byte() % 4];
        key.assign(in.byte() % 131, 'k');
        for (std::size_t i = 0; i < n; ++i) {
            mocks[i].accept_any_send = true;
            mocks[i].on_empty(fuzz::refill, &in);
            clock.add(mocks[i]);
            wires[i].inner = mocks[i].port();
            wires[i].clock = &clock;
            ports[i] = wires[i].port();
            bufs[i].resize(buf_size);  // exactly sized: ASan sees any overrun
            conns[i].emplace(ports[i], config, bufs[i].data(), bufs[i].size());
            conn_list[i] = &*conns[i];
        }
    }

    std::uint32_t now() {
        clock.sync();
        return clock.now;
    }
    std::size_t quorum() const { return n / 2 + 1; }
    bool valid_key() const { return !key.empty() && key.size() <= RESPLOCK_MAX_KEY_LEN; }
    std::uint32_t requests_before = 0;  // requests() when the current operation started

    std::uint32_t requests() const {
        std::uint32_t r = 0;
        for (std::size_t i = 0; i < n; ++i)
            r += wires[i].requests;
        return r;
    }
    // Whether the current operation sent any request.
    bool sent() const { return requests() != requests_before; }
    // A bound on one round of requests (every server, a NOSCRIPT second pass included), each
    // server waiting up to `wait` ms: sends one after another, each within its wait; then reads,
    // each within its wait or, once that has passed, the read grace; and so on for the text.
    std::uint32_t round_bound(std::uint32_t wait) const {
        if (wait > config.timeout_ms) wait = config.timeout_ms;
        return static_cast<std::uint32_t>(n) * (wait + 3 * resplock::quorum_read_grace_ms);
    }
    static std::uint32_t wait_for(std::uint32_t ttl) {
        const std::uint32_t w = ttl / resplock::quorum_wait_divisor;
        return w < resplock::quorum_wait_min_ms ? resplock::quorum_wait_min_ms : w;
    }

    void check_after(QuorumLock& lock) {
        for (std::size_t i = 0; i < n; ++i) {
            const std::string_view err = conns[i]->error_text();
            if (!err.empty()) {
                FUZZ_CHECK(err.data() >= bufs[i].data() &&
                           err.data() + err.size() <= bufs[i].data() + bufs[i].size());
            }
        }
        const std::uint32_t remaining = lock.remaining_ms();
        FUZZ_CHECK(lock.held() == (remaining > 0));
        if (!lock.held()) return;
        // Held only after a majority confirmed, and never longer than that allows from before
        // the confirming call's first send.
        FUZZ_CHECK(lease.valid);
        FUZZ_CHECK(!lock.token().empty());
        const std::int64_t elapsed = static_cast<std::uint32_t>(now() - lease.from);
        FUZZ_CHECK(remaining <= span(lease.ttl) - elapsed);
    }

    // Servers whose log has an exchange matching `request` whose reply satisfies `answer`.
    template <typename Match, typename Answer>
    std::size_t servers_where(Match request, Answer answer) const {
        std::size_t count = 0;
        for (std::size_t i = 0; i < n; ++i) {
            for (const Exchange& e : wires[i].log) {
                if (request(fuzz::arguments(e.request)) && answer(e.reply)) {
                    ++count;
                    break;
                }
            }
        }
        return count;
    }
    // ... whose reply is exactly `reply`.
    template <typename Match>
    std::size_t servers_with(Match request, std::string_view reply) const {
        return servers_where(request, [reply](const std::string& r) { return r == reply; });
    }
    // ... whose reply is the integer `value`, however it is spelled (":01" is 1 to the parser).
    template <typename Match>
    std::size_t servers_with(Match request, long long value) const {
        return servers_where(request, [value](const std::string& r) {
            long long v = 0;
            return fuzz::integer_reply(r, &v) && v == value;
        });
    }

    bool set_request(const std::vector<std::string>& a, std::uint32_t ttl) const {
        return a.size() == 6 && a[0] == "SET" && a[1] == key && a[3] == "NX" && a[4] == "PX" &&
               a[5] == std::to_string(ttl);
    }

    // Every request of an acquisition is a SET of a fresh token, or the owner-checked delete of
    // one (it goes to every server, even those the SET did not reach). A single attempt uses one
    // token throughout.
    void check_attempt_requests(std::uint32_t ttl, bool one_attempt) {
        std::string token;
        for (std::size_t i = 0; i < n; ++i) {
            for (const Exchange& e : wires[i].log) {
                const std::vector<std::string> a = fuzz::arguments(e.request);
                if (!a.empty() && (a[0] == "AUTH" || a[0] == "SELECT")) continue;  // handshake
                FUZZ_CHECK(set_request(a, ttl) || owner_request(a, 3, key));
                const std::string& t = a[2 + (a[0] == "SET" ? 0 : 2)];
                FUZZ_CHECK(t.size() == resplock::token_len &&
                           t.find_first_not_of("0123456789abcdef") == std::string::npos);
                if (one_attempt && !token.empty()) FUZZ_CHECK(t == token);
                token = t;
            }
        }
    }

    void acquired(Status s, QuorumLock& lock, std::uint32_t ttl, std::uint32_t start,
                  bool one_attempt, bool refused_before) {
        FUZZ_CHECK(common(s) || one_of(s, {Status::ok, Status::busy, Status::random_failed}));
        if (refused_before) FUZZ_CHECK(s == Status::invalid_argument);
        if (s == Status::invalid_argument || s == Status::random_failed) {
            if (one_attempt) FUZZ_CHECK(!sent());
            if (s == Status::random_failed) lease.valid = false;
            return;
        }
        lease.valid = false;
        check_attempt_requests(ttl, one_attempt);
        const std::string token(lock.token());
        if (s == Status::ok) {
            // A majority answered exactly OK to the SET of this very token.
            const auto this_set = [&](const std::vector<std::string>& a) {
                return set_request(a, ttl) && a[2] == token;
            };
            const std::size_t exact = servers_with(this_set, "+OK\r\n");
            FUZZ_CHECK(exact >= quorum());
            if (one_attempt) FUZZ_CHECK(lock.granted() == exact);
            // Validity runs from before the first send of the granted attempt: no later than
            // the first of its SETs that went out.
            std::uint32_t from = start;
            if (!one_attempt) {
                bool first = true;
                for (std::size_t i = 0; i < n; ++i) {
                    for (const Exchange& e : wires[i].log) {
                        if (!this_set(fuzz::arguments(e.request))) continue;
                        if (first || static_cast<std::int32_t>(e.sent_at - from) < 0) {
                            from = e.sent_at;
                        }
                        first = false;
                    }
                }
            }
            FUZZ_CHECK(lock.remaining_ms() <= span(ttl) - static_cast<std::uint32_t>(now() - from));
            lease = {true, ttl, from};
            return;
        }
        FUZZ_CHECK(token.empty());  // no token is kept after a failed attempt
        if (!one_attempt) return;
        const auto any_set = [&](const std::vector<std::string>& a) { return set_request(a, ttl); };
        const std::size_t exact = servers_with(any_set, "+OK\r\n");
        FUZZ_CHECK(lock.granted() == exact);
        if (s == Status::busy) FUZZ_CHECK(n - servers_with(any_set, "$-1\r\n") < quorum());
        if (exact >= quorum()) {
            // Granted by a majority but not held: the validity ran out first.
            FUZZ_CHECK(s == Status::timeout);
            FUZZ_CHECK(static_cast<std::uint32_t>(now() - start) >= span(ttl));
        }
        // The delete went to every server the SET reached, even where its reply was lost: a
        // connect or send followed the SET there. (With a buffer under lock_buffer_min(), which
        // QuorumLock requires, a SET may fit where the delete does not.)
        if (bufs[0].size() < resplock::lock_buffer_min()) return;
        for (std::size_t i = 0; i < n; ++i) {
            for (const Exchange& e : wires[i].log) {
                if (set_request(fuzz::arguments(e.request), ttl)) {
                    FUZZ_CHECK(wires[i].calls > e.calls);
                }
            }
        }
    }

    void run() {
        QuorumLock lock(conn_list, n, key);
        FUZZ_CHECK(lock.quorum() == (valid_key() ? quorum() : 0U));
        static const bool trace = std::getenv("RESPLOCK_FUZZ_TRACE") != nullptr;
        while (!in.empty()) {
            const std::uint8_t op = in.byte();
            Status last = Status::ok;
            const std::uint32_t start = now();
            const std::string token(lock.token());
            const bool held_before = lock.held();
            requests_before = requests();
            for (std::size_t i = 0; i < n; ++i)
                wires[i].log.clear();
            const auto elapsed = [&] { return static_cast<std::uint32_t>(now() - start); };
            switch (op % 8) {
                case 0: {
                    const std::uint32_t ttl = read_ttl(in);
                    const Status s = last = lock.acquire(ttl);
                    const bool valid_ttl = ttl >= 1 && ttl <= resplock::max_ttl_ms;
                    FUZZ_CHECK(elapsed() <= 2 * round_bound(wait_for(ttl)));
                    acquired(s, lock, ttl, start, true, !valid_key() || !valid_ttl || held_before);
                    break;
                }
                case 1: {
                    const std::uint32_t ttl = read_ttl(in);
                    const std::uint32_t wait = 4U * in.byte();
                    const Status s = last = lock.try_acquire(ttl, wait);
                    // Within the wait, a late wake-up, and one attempt.
                    FUZZ_CHECK(elapsed() <= wait + 5 + 2 * round_bound(wait_for(ttl)));
                    acquired(s, lock, ttl, start, false, !valid_key());
                    break;
                }
                case 2: {
                    const Status s = last = lock.release();
                    FUZZ_CHECK(common(s) || one_of(s, {Status::ok, Status::not_owner,
                                                       Status::expired, Status::unknown_outcome}));
                    FUZZ_CHECK(elapsed() <= round_bound(config.timeout_ms));
                    FUZZ_CHECK(!lock.held());
                    lease.valid = false;
                    if (token.empty() || !valid_key()) {
                        FUZZ_CHECK(s == Status::invalid_argument && !sent());
                        break;
                    }
                    const auto this_release = [&](const std::vector<std::string>& a) {
                        return owner_request(a, 3, key) && a[4] == token;
                    };
                    // The answers by value (another WRONGTYPE text would count as not_owner too).
                    const std::size_t deleted = servers_with(this_release, 1);
                    const std::size_t other =
                        servers_with(this_release, -1) +
                        servers_with(this_release,
                                     "-WRONGTYPE Operation against a key holding the wrong kind "
                                     "of value\r\n");
                    const std::size_t gone = servers_with(this_release, 0);
                    if (one_of(s, {Status::ok, Status::not_owner, Status::expired})) {
                        // A majority answered; the token is forgotten.
                        FUZZ_CHECK(lock.token().empty());
                        FUZZ_CHECK(s != Status::ok || deleted >= 1);
                        FUZZ_CHECK(s == Status::ok || deleted == 0);
                    } else {
                        FUZZ_CHECK(lock.token() == token);  // kept for a retry
                        FUZZ_CHECK(deleted + gone + other < quorum());
                    }
                    break;
                }
                case 3: {
                    const std::uint32_t ttl = read_ttl(in);
                    const std::uint8_t w = in.byte();
                    const std::uint32_t wait = w == 255 ? resplock::max_span_ms : 4U * w;
                    const Status s = last = w == 255 ? lock.extend(ttl) : lock.extend(ttl, wait);
                    FUZZ_CHECK(common(s) ||
                               one_of(s, {Status::ok, Status::expired, Status::not_owner,
                                          Status::unknown_outcome}));
                    std::uint32_t bound = wait_for(ttl);
                    if (wait < bound) bound = wait > 0 ? wait : 1;
                    FUZZ_CHECK(elapsed() <= round_bound(bound));
                    if (token.empty() || !valid_key()) {
                        FUZZ_CHECK(s == Status::invalid_argument && !sent());
                        break;
                    }
                    FUZZ_CHECK(lock.token() == token);  // kept in every case
                    const auto this_extend = [&](const std::vector<std::string>& a) {
                        return owner_request(a, 4, key) && a[4] == token &&
                               a[5] == std::to_string(ttl);
                    };
                    if (s == Status::ok) {
                        const std::size_t exact = servers_with(this_extend, 1);
                        FUZZ_CHECK(exact >= quorum() && lock.granted() == exact);
                        FUZZ_CHECK(lock.remaining_ms() <= span(ttl) - elapsed());
                        lease = {true, ttl, start};
                    } else if (s == Status::expired || s == Status::not_owner) {
                        FUZZ_CHECK(!lock.held());
                        lease.valid = false;
                    }
                    // Otherwise the validity, if any is left, is the earlier of the old and the
                    // new one: the old lease still bounds it.
                    break;
                }
                case 4: {
                    LockInfo info;
                    info.state = LockState::held_by_me;
                    info.ttl_ms = 12345;
                    const Status s = last = lock.query(info);
                    FUZZ_CHECK(common(s) || s == Status::ok);
                    FUZZ_CHECK(elapsed() <= round_bound(config.timeout_ms));
                    if (s != Status::ok) {
                        FUZZ_CHECK(info.state == LockState::held_by_me && info.ttl_ms == 12345);
                        break;
                    }
                    std::size_t answered = 0;
                    std::size_t mine = 0;
                    for (std::size_t i = 0; i < n; ++i) {
                        for (const Exchange& e : wires[i].log) {
                            if (!owner_request(fuzz::arguments(e.request), 2, key) ||
                                !fuzz::starts(e.reply, "*2\r\n")) {
                                continue;
                            }
                            ++answered;
                            const std::string bulk =
                                "$" + std::to_string(token.size()) + "\r\n" + token + "\r\n";
                            mine += !token.empty() && e.reply.find(bulk) == 4 ? 1U : 0U;
                            break;
                        }
                    }
                    FUZZ_CHECK(answered >= quorum());
                    if (info.state == LockState::held_by_me) FUZZ_CHECK(mine >= quorum());
                    if (info.state == LockState::free) FUZZ_CHECK(info.ttl_ms == -2);
                    break;
                }
                case 5: {
                    const std::string_view t = in.bytes(in.byte() % 48);
                    const Status s = last = lock.adopt(t);
                    FUZZ_CHECK(s == Status::ok || s == Status::invalid_argument);
                    FUZZ_CHECK((s == Status::ok) ==
                               (valid_key() && !t.empty() && t.size() <= resplock::max_token_len));
                    if (s == Status::ok) {
                        FUZZ_CHECK(lock.token() == t && !lock.held());
                        lease.valid = false;
                    }
                    break;
                }
                case 6:
                    clock.advance(in.u16() << (op >> 3 & 7));
                    break;
                default:
                    if ((op & 8) == 0) {
                        mocks[0].random_fails = !mocks[0].random_fails;
                    } else if (op >> 4 == 0) {
                        lock.close();
                    } else {
                        conns[((op >> 4) - 1U) % n]->close();
                    }
            }
            if (trace) {
                std::fprintf(stderr, "op %d: %s, held %d, granted %u, clock +%u\n", op % 8,
                             resplock::to_string(last), lock.held() ? 1 : 0,
                             static_cast<unsigned>(lock.granted()),
                             static_cast<unsigned>(now() - start));
            }
            check_after(lock);
        }
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Harness h(data, size);
    h.run();
    return 0;
}
