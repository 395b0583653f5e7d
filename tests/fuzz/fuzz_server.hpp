// The server side of the lock fuzz targets (fuzz_lock, fuzz_quorum): mock ports whose script is
// taken from the fuzz input whenever the library connects, sends or receives with nothing
// scripted, a wrapper recording each request and the bytes received for it, a clock shared by
// several mock ports, and the checks both targets make on what came back.
//
// Server events, read from the input as the calls need them:
//   connect  b % 8: 0-4 ok, 5 timeout, 6 refused, 7 no host (b & 8) or error
//   send     b < 0xf0 accepted; else fails: timeout, closed or error by b % 3
//   recv     b % 8: 0-3 reply LEN BYTES delivered in chunks of b >> 3 (0: at once); 4 timeout;
//            5 delay 1 + 8 * b ms; 6 closed; 7 error
#ifndef RESPLOCK_TESTS_FUZZ_SERVER_HPP
#define RESPLOCK_TESTS_FUZZ_SERVER_HPP

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/mock.hpp"

namespace fuzz {

using resplock::Status;
using resplock::mock::MockPort;

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

// One clock for several mock ports (a quorum lock requires its servers' ports to share one):
// whatever one mock's clock moved by (a timeout, a delay, a sleep) moves every mock's clock.
struct SharedClock {
    std::vector<MockPort*> mocks;
    std::vector<std::uint32_t> seen;
    std::uint32_t now = 0;

    void add(MockPort& m) {
        if (mocks.empty()) now = m.now_ms;
        m.now_ms = now;
        mocks.push_back(&m);
        seen.push_back(now);
    }
    void sync() {
        for (std::size_t i = 0; i < mocks.size(); ++i)
            now += mocks[i]->now_ms - seen[i];
        for (std::size_t i = 0; i < mocks.size(); ++i)
            mocks[i]->now_ms = seen[i] = now;
    }
    void advance(std::uint32_t ms) {
        sync();
        now += ms;
        sync();
    }
};

// One request and what was received for it, in the order the requests went out.
struct Exchange {
    std::string request;
    std::string reply;
    std::uint32_t sent_at;     // clock when its first byte went out
    std::uint32_t calls;       // Wire::calls then
    std::uint32_t replied_at;  // clock when its last byte arrived (sent_at while none has)
};

// Wraps a mock's port to record each request and the bytes received after it.
struct Wire {
    resplock_port_t inner;
    SharedClock* clock = nullptr;  // null: the mock's own clock
    std::string request;           // sends since the last recv or connect: one request
    std::string reply;             // bytes received since that request went out
    bool replied = true;
    std::uint32_t requests = 0;
    std::uint32_t calls = 0;             // connect and send calls
    std::vector<Exchange> log;           // requests since the caller last cleared it
    std::string set_request, set_reply;  // the last SET before the current request, and its reply

    static bool is_set(const std::string& r) {
        return r.compare(0, 13, "*6\r\n$3\r\nSET\r\n") == 0;
    }
    // The last SET (acquire attempt) sent, and what came back for it.
    const std::string& last_set_request() const { return is_set(request) ? request : set_request; }
    const std::string& last_set_reply() const { return is_set(request) ? reply : set_reply; }

    static Wire& of(void* ctx) { return *static_cast<Wire*>(ctx); }
    void synced() {
        if (clock != nullptr) clock->sync();
    }
    std::uint32_t time() {
        synced();
        return inner.now_ms(inner.ctx);
    }
    static std::int32_t connect(void* ctx, const char* host, std::uint16_t port, std::uint32_t ms) {
        Wire& w = of(ctx);
        ++w.calls;
        // A reconnect may follow a complete exchange (the look before the next request found the
        // connection closed): keep the last SET and its reply.
        if (is_set(w.request)) {
            w.set_request = w.request;
            w.set_reply = w.reply;
        }
        w.request.clear();
        w.reply.clear();
        w.replied = true;
        const std::int32_t r = w.inner.connect(w.inner.ctx, host, port, ms);
        w.synced();
        return r;
    }
    static std::int32_t send(void* ctx, const std::uint8_t* data, std::size_t len,
                             std::uint32_t ms) {
        Wire& w = of(ctx);
        ++w.calls;
        const std::uint32_t at = w.time();
        const std::int32_t n = w.inner.send(w.inner.ctx, data, len, ms);
        w.synced();
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
                w.log.push_back({{}, {}, at, w.calls, at});
            }
            w.request.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
            if (!w.log.empty()) w.log.back().request = w.request;
        }
        return n;
    }
    static std::int32_t recv(void* ctx, std::uint8_t* buf, std::size_t len, std::uint32_t ms) {
        Wire& w = of(ctx);
        const std::int32_t n = w.inner.recv(w.inner.ctx, buf, len, ms);
        w.synced();
        FUZZ_CHECK(n <= static_cast<std::int64_t>(len));
        // A look without waiting comes before a request: whatever it finds answers none of ours
        // (the connection drops it and reconnects), so it is no part of the last reply.
        if (n > 0 && ms != 0) {
            w.reply.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(n));
            w.replied = true;
            if (!w.log.empty()) {
                w.log.back().reply = w.reply;
                w.log.back().replied_at = w.time();
            }
        }
        return n;
    }
    static void close(void* ctx) { of(ctx).inner.close(of(ctx).inner.ctx); }
    static std::uint32_t now(void* ctx) { return of(ctx).time(); }
    static void sleep(void* ctx, std::uint32_t ms) {
        of(ctx).inner.sleep_ms(of(ctx).inner.ctx, ms);
        of(ctx).synced();
    }
    static std::int32_t random(void* ctx, std::uint8_t* buf, std::size_t len) {
        return of(ctx).inner.random(of(ctx).inner.ctx, buf, len);
    }
    resplock_port_t port() { return {this, connect, send, recv, close, now, sleep, random}; }
};

// The server's side of the script, taken from the input when the mock runs out of steps.
inline void refill(void* user, MockPort& mock, MockPort::Call call) {
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

// TTL: u16 little-endian; 0xfff8.. pick 0, 1, 2, 3, max-1, max, max+1, 2^32-1.
inline std::uint32_t read_ttl(Input& in) {
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

inline bool one_of(Status s, std::initializer_list<Status> set) {
    for (Status x : set) {
        if (x == s) return true;
    }
    return false;
}

// Statuses any call that talks to the server may return: transport and connect failures, and
// error replies (to the command itself or to the handshake).
inline bool common(Status s) {
    return one_of(s, {Status::timeout, Status::no_host, Status::connect_failed, Status::closed,
                      Status::io_error, Status::protocol_error, Status::too_large,
                      Status::invalid_argument}) ||
           (s >= Status::server_error && s <= Status::wrong_type) || s == Status::try_again ||
           s == Status::no_replicas;
}

// The value of an integer reply that is exactly the received bytes, or false.
inline bool integer_reply(const std::string& r, long long* value) {
    if (r.size() < 4 || r[0] != ':' || r.compare(r.size() - 2, 2, "\r\n") != 0) return false;
    const std::string digits = r.substr(1, r.size() - 3);
    if (digits.find_first_not_of("-0123456789") != std::string::npos) return false;
    char* end = nullptr;
    *value = std::strtoll(digits.c_str(), &end, 10);
    return end != digits.c_str() && *end == '\0';
}

inline bool starts(const std::string& s, std::string_view prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

// The owner script sent with `argc` arguments (EVALSHA, or EVAL after NOSCRIPT).
inline bool script_request(const std::string& r, char argc) {
    return r.size() > 2 && r[0] == '*' && r[1] == argc &&
           (starts(r.substr(2), "\r\n$7\r\nEVALSHA\r\n") ||
            starts(r.substr(2), "\r\n$4\r\nEVAL\r\n"));
}

// The arguments of a request the library encoded (an array of bulk strings); empty if it is not
// one, or not whole.
inline std::vector<std::string> arguments(const std::string& r) {
    std::vector<std::string> args;
    std::size_t pos = 0;
    auto number = [&](char type, std::size_t* out) {
        if (pos >= r.size() || r[pos] != type) return false;
        const std::size_t end = r.find("\r\n", pos);
        if (end == std::string::npos || end == pos + 1) return false;
        *out = 0;
        for (std::size_t i = pos + 1; i < end; ++i) {
            if (r[i] < '0' || r[i] > '9') return false;
            *out = *out * 10 + static_cast<std::size_t>(r[i] - '0');
        }
        pos = end + 2;
        return true;
    };
    std::size_t count = 0;
    if (!number('*', &count)) return {};
    for (std::size_t i = 0; i < count; ++i) {
        std::size_t len = 0;
        if (!number('$', &len) || pos + len + 2 > r.size()) return {};
        args.push_back(r.substr(pos, len));
        pos += len + 2;
    }
    if (pos != r.size()) return {};
    return args;
}

// Whether `args` are the owner script's (EVALSHA or EVAL, numkeys 1, `key`) with `argc` arguments
// after the script, the token being args[4] when there is one.
inline bool owner_request(const std::vector<std::string>& args, std::size_t argc,
                          const std::string& key) {
    return args.size() == 2 + argc && (args[0] == "EVALSHA" || args[0] == "EVAL") &&
           args[2] == "1" && args[3] == key;
}

}  // namespace fuzz

#endif  // RESPLOCK_TESTS_FUZZ_SERVER_HPP
