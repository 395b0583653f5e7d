// Fuzz target for Lock and Connection over the mock port, with the server played by the input.
// The input is read as the calls go: four bytes of configuration, then operations (acquire,
// try_acquire, release, extend, query, adopt, clock steps, close, random failure); whenever the
// library connects, sends or receives with nothing scripted, the next bytes say what the server
// does (connect result, a failed send, a reply chunk, a timeout, a delay, a close). Requests are
// accepted whatever they hold and recorded, so each result can be checked against the exact bytes
// the server sent for that request. The fake clock only moves by timeouts, delays and sleeps, and
// every scripted event consumes input, so no loop can outlive the input.
//
// Input format (tests/fuzz/make_corpus.py writes seeds in it):
//   config   4 bytes: flags (1 password, 2 user name, 4 SELECT 3), timeout (1 + 20 * b ms),
//            buffer (64, 200, lock_buffer_min(), 512 by b % 4), key length (b % 131; 0 and
//            over 128 are invalid)
//   op       b % 8: 0 acquire TTL; 1 try_acquire TTL WAIT (4 * b ms); 2 release; 3 extend TTL;
//            4 query; 5 adopt LEN BYTES; 6 advance the clock by u16 << (b >> 3 & 7) ms;
//            7 close the connection (b & 8) or toggle random failure
//   TTL      u16 little-endian; 0xfff8.. pick 0, 1, 2, 3, max-1, max, max+1, 2^32-1
//   connect  b % 8: 0-4 ok, 5 timeout, 6 refused, 7 no host (b & 8) or error
//   send     b < 0xf0 accepted; else fails: timeout, closed or error by b % 3
//   recv     b % 8: 0-3 reply LEN BYTES delivered in chunks of b >> 3 (0: at once); 4 timeout;
//            5 delay 1 + 8 * b ms; 6 closed; 7 error
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/mock.hpp"

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
using resplock::LockInfo;
using resplock::LockState;
using resplock::Status;
using resplock::mock::MockPort;

namespace {

class Input {
  public:
    Input(const std::uint8_t* data, std::size_t size) : p_(data), n_(size) {}
    bool empty() const { return n_ == 0; }
    std::uint8_t byte() {
        if (n_ == 0) return 0;
        --n_;
        return *p_++;
    }
    std::uint32_t u16() {
        const std::uint32_t low = byte();
        return low | std::uint32_t{byte()} << 8;
    }
    std::string_view bytes(std::size_t n) {
        if (n > n_) n = n_;
        const std::string_view v(reinterpret_cast<const char*>(p_), n);
        p_ += n;
        n_ -= n;
        return v;
    }

  private:
    const std::uint8_t* p_;
    std::size_t n_;
};

// Wraps the mock's port to record each request and the bytes received after it.
struct Wire {
    resplock_port_t inner;
    std::string request;  // sends since the last recv or connect: one request
    std::string reply;    // bytes received since that request went out
    bool replied = true;
    std::uint32_t requests = 0;
    std::string set_request, set_reply;  // the last SET before the current request, and its reply

    static bool is_set(const std::string& r) {
        return r.compare(0, 13, "*6\r\n$3\r\nSET\r\n") == 0;
    }
    // The last SET (acquire attempt) sent, and what came back for it.
    const std::string& last_set_request() const { return is_set(request) ? request : set_request; }
    const std::string& last_set_reply() const { return is_set(request) ? reply : set_reply; }

    static Wire& of(void* ctx) { return *static_cast<Wire*>(ctx); }
    static std::int32_t connect(void* ctx, const char* host, std::uint16_t port, std::uint32_t ms) {
        Wire& w = of(ctx);
        // A reconnect may follow a complete exchange (the look before the next request found the
        // connection closed): keep the last SET and its reply.
        if (is_set(w.request)) {
            w.set_request = w.request;
            w.set_reply = w.reply;
        }
        w.request.clear();
        w.reply.clear();
        w.replied = true;
        return w.inner.connect(w.inner.ctx, host, port, ms);
    }
    static std::int32_t send(void* ctx, const std::uint8_t* data, std::size_t len,
                             std::uint32_t ms) {
        Wire& w = of(ctx);
        const std::int32_t n = w.inner.send(w.inner.ctx, data, len, ms);
        FUZZ_CHECK(n <= static_cast<std::int64_t>(len));
        if (n > 0) {
            if (w.replied) {
                if (is_set(w.request)) {
                    w.set_request = w.request;
                    w.set_reply = w.reply;
                }
                w.request.clear();
                w.reply.clear();
                w.replied = false;
                ++w.requests;
            }
            w.request.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
        }
        return n;
    }
    static std::int32_t recv(void* ctx, std::uint8_t* buf, std::size_t len, std::uint32_t ms) {
        Wire& w = of(ctx);
        const std::int32_t n = w.inner.recv(w.inner.ctx, buf, len, ms);
        FUZZ_CHECK(n <= static_cast<std::int64_t>(len));
        // A look without waiting comes before a request: whatever it finds answers none of ours
        // (the connection drops it and reconnects), so it is no part of the last reply.
        if (n > 0 && ms != 0) {
            w.reply.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(n));
            w.replied = true;
        }
        return n;
    }
    static void close(void* ctx) { of(ctx).inner.close(of(ctx).inner.ctx); }
    static std::uint32_t now(void* ctx) { return of(ctx).inner.now_ms(of(ctx).inner.ctx); }
    static void sleep(void* ctx, std::uint32_t ms) {
        of(ctx).inner.sleep_ms(of(ctx).inner.ctx, ms);
    }
    static std::int32_t random(void* ctx, std::uint8_t* buf, std::size_t len) {
        return of(ctx).inner.random(of(ctx).inner.ctx, buf, len);
    }
    resplock_port_t port() { return {this, connect, send, recv, close, now, sleep, random}; }
};

// The server's side of the script, taken from the input when the mock runs out of steps.
void refill(void* user, MockPort& mock, MockPort::Call call) {
    Input& in = *static_cast<Input*>(user);
    if (in.empty()) return;  // the next call is unexpected: the port fails from now on
    const std::uint8_t b = in.byte();
    switch (call) {
        case MockPort::Call::connect:
            switch (b % 8) {
                case 5:
                    mock.on_connect(RESPLOCK_PORT_TIMEOUT);
                    break;
                case 6:
                    mock.on_connect(RESPLOCK_PORT_REFUSED);
                    break;
                case 7:
                    mock.on_connect((b & 8) != 0 ? RESPLOCK_PORT_NO_HOST : RESPLOCK_PORT_ERROR);
                    break;
                default:
                    mock.on_connect(RESPLOCK_PORT_OK);
            }
            break;
        case MockPort::Call::send:
            if (b >= 0xf0) {
                const std::int32_t codes[] = {0, RESPLOCK_PORT_CLOSED, RESPLOCK_PORT_ERROR};
                mock.send_fail(codes[b % 3]);
            }
            break;
        case MockPort::Call::recv:
            switch (b % 8) {
                case 4:
                    mock.recv_timeout();
                    break;
                case 5:
                    mock.recv_delay(1 + 8U * in.byte());
                    break;
                case 6:
                    mock.recv_closed();
                    break;
                case 7:
                    mock.recv_error();
                    break;
                default:
                    mock.reply(in.bytes(in.byte()), b >> 3);
            }
            break;
    }
}

std::uint32_t read_ttl(Input& in) {
    const std::uint32_t v = in.u16();
    const std::uint32_t special[] = {0,
                                     1,
                                     2,
                                     3,
                                     resplock::max_ttl_ms - 1,
                                     resplock::max_ttl_ms,
                                     resplock::max_ttl_ms + 1,
                                     0xffffffffU};
    return v >= 0xfff8 ? special[v - 0xfff8] : v;
}

bool one_of(Status s, std::initializer_list<Status> set) {
    for (Status x : set) {
        if (x == s) return true;
    }
    return false;
}

// Statuses any call that talks to the server may return: transport and connect failures, and
// error replies (to the command itself or to the handshake).
bool common(Status s) {
    return one_of(s, {Status::timeout, Status::no_host, Status::connect_failed, Status::closed,
                      Status::io_error, Status::protocol_error, Status::too_large,
                      Status::invalid_argument}) ||
           (s >= Status::server_error && s <= Status::wrong_type);
}

// The value of an integer reply that is exactly the received bytes, or false.
bool integer_reply(const std::string& r, long long* value) {
    if (r.size() < 4 || r[0] != ':' || r.compare(r.size() - 2, 2, "\r\n") != 0) return false;
    const std::string digits = r.substr(1, r.size() - 3);
    if (digits.find_first_not_of("-0123456789") != std::string::npos) return false;
    char* end = nullptr;
    *value = std::strtoll(digits.c_str(), &end, 10);
    return end != digits.c_str() && *end == '\0';
}

bool starts(const std::string& s, std::string_view prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

// The owner script sent with `argc` arguments (EVALSHA, or EVAL after NOSCRIPT).
bool script_request(const std::string& r, char argc) {
    return r.size() > 2 && r[0] == '*' && r[1] == argc &&
           (starts(r.substr(2), "\r\n$7\r\nEVALSHA\r\n") ||
            starts(r.substr(2), "\r\n$4\r\nEVAL\r\n"));
}

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
        mock.on_empty(refill, &in);
        wire.inner = mock.port();
        port = wire.port();
        const std::uint8_t flags = in.byte();
        if ((flags & 1) != 0) config.password = "secret";
        if ((flags & 3) == 3) config.username = "fuzz";
        if ((flags & 4) != 0) config.db = 3;
        config.timeout_ms = 1 + 20U * in.byte();
        const std::size_t sizes[] = {64, 200, resplock::lock_buffer_min(), 512};
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
                    if ((op & 8) != 0) {
                        conn.close();
                    } else {
                        mock.random_fails = !mock.random_fails;
                    }
            }
            if (trace) {
                std::fprintf(stderr, "op %d: %s, held %d, clock +%u\n", op % 8,
                             resplock::to_string(last), lock.held() ? 1 : 0,
                             static_cast<unsigned>(mock.now_ms - start));
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
