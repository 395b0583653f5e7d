// Mock port: a scripted transport and a fake clock for host-side unit tests of code that uses
// resplock (the library's own tests and yours). A script is a list of steps consumed in order:
// the code under test must connect, send exactly the expected bytes and read the replies as
// scripted; anything else is recorded as a mismatch. Fixed-size storage: the step list holds
// views of the caller's bytes (string literals, usually), which must outlive the mock.
#ifndef RESPLOCK_MOCK_HPP
#define RESPLOCK_MOCK_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "resplock/core/config.h"
#include "resplock/core/port.h"

namespace resplock::mock {

class MockPort {
  public:
    static constexpr std::size_t max_steps = 64;

    MockPort() noexcept;
    MockPort(const MockPort&) = delete;
    MockPort& operator=(const MockPort&) = delete;
    ~MockPort() = default;

    // The port whose functions act on this mock.
    resplock_port_t port() noexcept;

    // Script steps, consumed in order.
    // connect returns `result` (RESPLOCK_PORT_OK or a negative RESPLOCK_PORT_* code); a
    // RESPLOCK_PORT_TIMEOUT result advances the clock by the connect timeout.
    MockPort& on_connect(std::int32_t result = RESPLOCK_PORT_OK) noexcept;
    // The client must send exactly `bytes` next, over any number of send calls.
    MockPort& expect(std::string_view bytes) noexcept;
    // recv delivers `bytes`, at most `chunk` per call (0: as much as the caller asks for).
    MockPort& reply(std::string_view bytes, std::size_t chunk = 0) noexcept;
    // recv waits out its whole timeout (the clock advances by it) and returns 0.
    MockPort& recv_timeout() noexcept;
    // recv advances the clock by `ms` (less than the caller's timeout) before the next step.
    MockPort& recv_delay(std::uint32_t ms) noexcept;
    // recv returns RESPLOCK_PORT_CLOSED / RESPLOCK_PORT_ERROR.
    MockPort& recv_closed() noexcept;
    MockPort& recv_error() noexcept;
    // send returns `result` (0: the clock advances by the timeout; or a negative code).
    MockPort& send_fail(std::int32_t result) noexcept;

    // Which call found the script empty (see on_empty).
    enum class Call : std::uint8_t { connect, send, recv };
    using Refill = void (*)(void* user, MockPort& mock, Call call);
    // An open-ended script, e.g. one driven by fuzz input: when a connect, send or recv finds no
    // step left, the consumed steps are dropped and `refill` may add more (adding none makes the
    // call unexpected, as usual). A connect also drops what is left of the previous connection's
    // steps, since a new connection starts with nothing in flight.
    void on_empty(Refill refill, void* user) noexcept {
        refill_ = refill;
        refill_user_ = user;
    }

    // True when every step was consumed and nothing unexpected happened.
    bool done() const noexcept { return mismatch_ == nullptr && next_ == count_; }
    // The first unexpected call, or null.
    const char* mismatch() const noexcept { return mismatch_; }
    // Steps left, including a partly consumed one.
    std::size_t steps_left() const noexcept { return count_ - next_; }

    // Public knobs and counters: tests set and read them directly.
    // NOLINTBEGIN(cppcoreguidelines-non-private-member-variables-in-classes)
    // Fake monotonic clock: starts near the 32-bit wrap so wrap-around is always exercised.
    std::uint32_t now_ms = 0xFFFFF000U;
    void advance(std::uint32_t ms) noexcept { now_ms += ms; }

    // Random bytes count up from random_next by random_step (0: a constant byte); set
    // `random_fails` to make the source fail.
    bool random_fails = false;
    std::uint8_t random_next = 0;
    std::uint8_t random_step = 1;

    // When set, send accepts whatever the client sends without an expect step (send_fail steps
    // still apply): for scripts whose replies do not depend on the requests.
    bool accept_any_send = false;

    // Counters for assertions.
    std::uint32_t connects = 0;
    // Where the last connect went (the host cut to RESPLOCK_MAX_HOST_LEN bytes).
    char last_host[RESPLOCK_MAX_HOST_LEN + 1] = {};
    const char* last_host_arg = nullptr;  // the host pointer itself (any length)
    std::uint16_t last_port = 0;
    std::uint32_t closes = 0;
    std::uint32_t slept_ms = 0;
    std::uint32_t sleeps = 0;
    bool is_open = false;
    // NOLINTEND(cppcoreguidelines-non-private-member-variables-in-classes)

  private:
    enum class Kind : std::uint8_t {
        connect,
        expect,
        reply,
        timeout,
        delay,
        closed,
        error,
        send_fail
    };
    struct Step {
        Kind kind;
        std::int32_t code;
        std::string_view bytes;
        std::size_t chunk;
        std::size_t done;  // bytes of `bytes` already matched or delivered
    };

    MockPort& add(const Step& step) noexcept;
    Step* current(Kind kind, const char* unexpected) noexcept;
    void top_up(Call call) noexcept;

    static std::int32_t do_connect(void* ctx, const char* host, std::uint16_t port,
                                   std::uint32_t timeout_ms);
    static std::int32_t do_send(void* ctx, const std::uint8_t* data, std::size_t len,
                                std::uint32_t timeout_ms);
    static std::int32_t do_recv(void* ctx, std::uint8_t* buf, std::size_t len,
                                std::uint32_t timeout_ms);
    static void do_close(void* ctx);
    static std::uint32_t do_now(void* ctx);
    static void do_sleep(void* ctx, std::uint32_t ms);
    static std::int32_t do_random(void* ctx, std::uint8_t* buf, std::size_t len);

    Step steps_[max_steps];
    std::size_t count_ = 0;
    std::size_t next_ = 0;
    const char* mismatch_ = nullptr;
    Refill refill_ = nullptr;
    void* refill_user_ = nullptr;
};

}  // namespace resplock::mock

#endif  // RESPLOCK_MOCK_HPP
