#include "resplock/ports/mock.hpp"

#include <cstring>
#include <new>

#include "resplock/ports/mock.h"

namespace resplock::mock {

namespace {
MockPort& self(void* ctx) {
    return *static_cast<MockPort*>(ctx);
}
}  // namespace

MockPort::MockPort() noexcept : steps_{} {}

resplock_port_t MockPort::port() noexcept {
    return {this, do_connect, do_send, do_recv, do_close, do_now, do_sleep, do_random};
}

MockPort& MockPort::add(const Step& step) noexcept {
    if (count_ == max_steps) {
        mismatch_ = "script longer than MockPort::max_steps";
        return *this;
    }
    steps_[count_++] = step;
    return *this;
}

MockPort& MockPort::on_connect(std::int32_t result) noexcept {
    return add({Kind::connect, result, {}, 0, 0});
}
MockPort& MockPort::expect(std::string_view bytes) noexcept {
    return add({Kind::expect, 0, bytes, 0, 0});
}
MockPort& MockPort::reply(std::string_view bytes, std::size_t chunk) noexcept {
    return add({Kind::reply, 0, bytes, chunk, 0});
}
MockPort& MockPort::recv_timeout() noexcept {
    return add({Kind::timeout, 0, {}, 0, 0});
}
MockPort& MockPort::recv_delay(std::uint32_t ms) noexcept {
    return add({Kind::delay, static_cast<std::int32_t>(ms), {}, 0, 0});
}
MockPort& MockPort::recv_closed() noexcept {
    return add({Kind::closed, RESPLOCK_PORT_CLOSED, {}, 0, 0});
}
MockPort& MockPort::recv_error() noexcept {
    return add({Kind::error, RESPLOCK_PORT_ERROR, {}, 0, 0});
}
MockPort& MockPort::send_fail(std::int32_t result) noexcept {
    return add({Kind::send_fail, result, {}, 0, 0});
}

// The current step if it is of `kind`; otherwise records `unexpected` and returns null.
MockPort::Step* MockPort::current(Kind kind, const char* unexpected) noexcept {
    if (mismatch_ == nullptr && next_ < count_ && steps_[next_].kind == kind) return &steps_[next_];
    if (mismatch_ == nullptr) mismatch_ = unexpected;
    return nullptr;
}

void MockPort::top_up(Call call) noexcept {
    if (refill_ == nullptr || mismatch_ != nullptr || next_ != count_) return;
    next_ = count_ = 0;
    refill_(refill_user_, *this, call);
}

std::int32_t MockPort::do_connect(void* ctx, const char* host, std::uint16_t port,
                                  std::uint32_t timeout_ms) {
    MockPort& m = self(ctx);
    ++m.connects;
    std::size_t n = 0;
    for (; host != nullptr && host[n] != '\0' && n < RESPLOCK_MAX_HOST_LEN; ++n)
        m.last_host[n] = host[n];
    m.last_host[n] = '\0';
    m.last_host_arg = host;
    m.last_port = port;
    if (m.refill_ != nullptr && m.next_ < m.count_ && m.steps_[m.next_].kind != Kind::connect) {
        m.next_ = m.count_;
    }
    m.top_up(Call::connect);
    Step* s = m.current(Kind::connect, "unexpected connect");
    if (s == nullptr) return RESPLOCK_PORT_ERROR;
    ++m.next_;
    if (s->code == RESPLOCK_PORT_TIMEOUT) m.advance(timeout_ms);
    m.is_open = s->code == RESPLOCK_PORT_OK;
    return s->code;
}

std::int32_t MockPort::do_send(void* ctx, const std::uint8_t* data, std::size_t len,
                               std::uint32_t timeout_ms) {
    MockPort& m = self(ctx);
    if (!m.is_open) {
        if (m.mismatch_ == nullptr) m.mismatch_ = "send on a closed connection";
        return RESPLOCK_PORT_ERROR;
    }
    m.top_up(Call::send);
    if (m.next_ < m.count_ && m.steps_[m.next_].kind == Kind::send_fail) {
        const std::int32_t code = m.steps_[m.next_++].code;
        if (code == 0) m.advance(timeout_ms);
        return code;
    }
    if (m.accept_any_send) {
        if (m.mismatch_ != nullptr) return RESPLOCK_PORT_ERROR;
        return static_cast<std::int32_t>(len);
    }
    Step* s = m.current(Kind::expect, "unexpected send");
    if (s == nullptr) return RESPLOCK_PORT_ERROR;
    const std::size_t left = s->bytes.size() - s->done;
    const std::size_t n = len < left ? len : left;
    if (std::memcmp(s->bytes.data() + s->done, data, n) != 0) {
        m.mismatch_ = "sent bytes differ from the expected ones";
        return RESPLOCK_PORT_ERROR;
    }
    s->done += n;
    if (s->done == s->bytes.size()) ++m.next_;
    // Bytes beyond the expected step must match the following expect step, if any.
    if (left < len) {
        const std::int32_t more = do_send(ctx, data + n, len - n, timeout_ms);
        return more < 0 ? more : static_cast<std::int32_t>(n) + more;
    }
    return static_cast<std::int32_t>(n);
}

std::int32_t MockPort::do_recv(void* ctx, std::uint8_t* buf, std::size_t len,
                               std::uint32_t timeout_ms) {
    MockPort& m = self(ctx);
    if (!m.is_open) {
        if (m.mismatch_ == nullptr) m.mismatch_ = "recv on a closed connection";
        return RESPLOCK_PORT_ERROR;
    }
    // A look without waiting (before a request is sent, or for a reply that may not have come)
    // finds nothing unless the script has the server send something first: not when the script
    // goes on with a request or a new connection.
    if (timeout_ms == 0 && (m.next_ == m.count_ || m.steps_[m.next_].kind == Kind::expect ||
                            m.steps_[m.next_].kind == Kind::connect)) {
        return 0;
    }
    for (;;) {
        m.top_up(Call::recv);
        if (m.next_ == m.count_ || m.steps_[m.next_].kind != Kind::delay) break;
        const auto ms = static_cast<std::uint32_t>(m.steps_[m.next_++].code);
        if (ms >= timeout_ms) {
            m.advance(timeout_ms);
            return 0;
        }
        m.advance(ms);
        timeout_ms -= ms;  // what follows in this call has only the rest of its timeout
    }
    if (m.mismatch_ != nullptr || m.next_ == m.count_) {
        if (m.mismatch_ == nullptr) m.mismatch_ = "unexpected recv";
        return RESPLOCK_PORT_ERROR;
    }
    Step& s = m.steps_[m.next_];
    switch (s.kind) {
        case Kind::timeout:
            ++m.next_;
            m.advance(timeout_ms);
            return 0;
        case Kind::closed:
        case Kind::error:
            ++m.next_;
            return s.code;
        case Kind::reply: {
            std::size_t n = s.bytes.size() - s.done;
            if (s.chunk != 0 && n > s.chunk) n = s.chunk;
            if (n > len) n = len;
            std::memcpy(buf, s.bytes.data() + s.done, n);
            s.done += n;
            if (s.done == s.bytes.size()) ++m.next_;
            return static_cast<std::int32_t>(n);
        }
        default:
            m.mismatch_ = "recv while the script expects another call";
            return RESPLOCK_PORT_ERROR;
    }
}

void MockPort::do_close(void* ctx) {
    MockPort& m = self(ctx);
    if (m.is_open) ++m.closes;
    m.is_open = false;
}

std::uint32_t MockPort::do_now(void* ctx) {
    return self(ctx).now_ms;
}

void MockPort::do_sleep(void* ctx, std::uint32_t ms) {
    MockPort& m = self(ctx);
    ++m.sleeps;
    m.slept_ms += ms;
    m.advance(ms);
}

std::int32_t MockPort::do_random(void* ctx, std::uint8_t* buf, std::size_t len) {
    MockPort& m = self(ctx);
    if (m.random_fails) return -1;
    for (std::size_t i = 0; i < len; ++i) {
        buf[i] = m.random_next;
        m.random_next = static_cast<std::uint8_t>(m.random_next + m.random_step);
    }
    return 0;
}

}  // namespace resplock::mock

// The C interface: one shared instance, rebuilt in place by resplock_mock_reset().
namespace {
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables)
resplock::mock::MockPort shared_mock;

resplock::mock::MockPort& from_c(resplock_mock_t* m) {
    return *reinterpret_cast<resplock::mock::MockPort*>(m);
}
const resplock::mock::MockPort& from_c(const resplock_mock_t* m) {
    return *reinterpret_cast<const resplock::mock::MockPort*>(m);
}
}  // namespace

extern "C" {

resplock_mock_t* resplock_mock_reset(void) {
    shared_mock.~MockPort();
    new (&shared_mock) resplock::mock::MockPort();
    return reinterpret_cast<resplock_mock_t*>(&shared_mock);
}
resplock_status_t resplock_mock_port_init(resplock_mock_t* mock,
                                          const resplock_mock_config_t* config,
                                          resplock_port_t* out) {
    if (mock == nullptr || out == nullptr) return RESPLOCK_STATUS_invalid_argument;
    if (config != nullptr) from_c(mock).now_ms = config->now_ms;
    *out = from_c(mock).port();
    return RESPLOCK_STATUS_ok;
}
void resplock_mock_on_connect(resplock_mock_t* mock, int32_t result) {
    from_c(mock).on_connect(result);
}
void resplock_mock_expect(resplock_mock_t* mock, const char* bytes, size_t len) {
    from_c(mock).expect({bytes, len});
}
void resplock_mock_reply(resplock_mock_t* mock, const char* bytes, size_t len) {
    from_c(mock).reply({bytes, len});
}
void resplock_mock_recv_timeout(resplock_mock_t* mock) {
    from_c(mock).recv_timeout();
}
void resplock_mock_recv_closed(resplock_mock_t* mock) {
    from_c(mock).recv_closed();
}
int resplock_mock_done(const resplock_mock_t* mock) {
    return from_c(mock).done() ? 1 : 0;
}
const char* resplock_mock_mismatch(const resplock_mock_t* mock) {
    return from_c(mock).mismatch();
}
uint32_t resplock_mock_now(const resplock_mock_t* mock) {
    return from_c(mock).now_ms;
}
void resplock_mock_advance(resplock_mock_t* mock, uint32_t ms) {
    from_c(mock).advance(ms);
}
void resplock_mock_random_fails(resplock_mock_t* mock, int fails) {
    from_c(mock).random_fails = fails != 0;
}

}  // extern "C"
