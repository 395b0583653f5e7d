// When a timed request began to go out: the start of the send() that carries its first byte,
// taken by a wrapper around the port's send. A thread sets stamp_armed before the call whose
// request it times; the first send after it writes stamp_at_ns and clears stamp_armed (still set
// after the call: nothing was sent). Per thread, for one connection per thread or per process;
// every wrapped port must have the same send (the POSIX port's).
#ifndef RESPLOCK_BENCH_SEND_STAMP_HPP
#define RESPLOCK_BENCH_SEND_STAMP_HPP

#include <cstddef>
#include <cstdint>

#include "basics.hpp"
#include "resplock/core/port.h"

namespace bench {

inline decltype(resplock_port_t::send) stamp_wrapped_send = nullptr;
inline thread_local bool stamp_armed = false;
inline thread_local std::int64_t stamp_at_ns = 0;

inline std::int32_t stamped_send(void* ctx, const std::uint8_t* data, std::size_t len,
                                 std::uint32_t timeout_ms) {
    if (stamp_armed) {
        stamp_at_ns = now_ns();
        stamp_armed = false;
    }
    return stamp_wrapped_send(ctx, data, len, timeout_ms);
}

// port's sends go through stamped_send from here on.
inline void stamp_sends(resplock_port_t& port) {
    stamp_wrapped_send = port.send;
    port.send = stamped_send;
}

}  // namespace bench

#endif
