// The POSIX port as an expression, for tests: resplock_posix_port_init with the defaults. It can
// fail only on a null argument, which would be a bug in the test itself.
#ifndef RESPLOCK_TESTS_PORTS_HPP
#define RESPLOCK_TESTS_PORTS_HPP

#include <cstdlib>

#include "resplock/ports/posix.h"

namespace support {

inline resplock_port_t posix_port(resplock_posix_t& ctx) {
    resplock_port_t port{};
    if (resplock_posix_port_init(&ctx, nullptr, &port) != RESPLOCK_STATUS_ok) std::abort();
    return port;
}

}  // namespace support

#endif  // RESPLOCK_TESTS_PORTS_HPP
