// The status a port's negative result stands for (resplock/core/port.h), for every caller of a
// port's connect, send and recv. Internal: not installed.
#ifndef RESPLOCK_PORT_STATUS_HPP
#define RESPLOCK_PORT_STATUS_HPP

#include <cstdint>

#include "resplock/core/port.h"
#include "resplock/core/status.hpp"

namespace resplock::detail {

inline Status port_status(std::int32_t code) noexcept {
    switch (code) {
        case RESPLOCK_PORT_TIMEOUT:
            return Status::timeout;
        case RESPLOCK_PORT_NO_HOST:
            return Status::no_host;
        case RESPLOCK_PORT_REFUSED:
            return Status::connect_failed;
        case RESPLOCK_PORT_CLOSED:
            return Status::closed;
        default:
            return Status::io_error;
    }
}

}  // namespace resplock::detail

#endif  // RESPLOCK_PORT_STATUS_HPP
