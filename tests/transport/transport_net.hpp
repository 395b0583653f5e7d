// The adapter port over the test's plaintext transport (plaintext_posix.h), as a Net for
// lock_cases.hpp and for the port's own cases: the transport context, the adapter's state and the
// port, in one object that stays in place.
#ifndef RESPLOCK_TESTS_TRANSPORT_NET_HPP
#define RESPLOCK_TESTS_TRANSPORT_NET_HPP

#include <cstdint>

#include "check.hpp"
#include "lock_cases.hpp"
#include "plaintext_posix.h"
#include "redis_server.hpp"
#include "resplock/ports/transport.h"

namespace transport_net {

// How the transport's waits are bounded.
enum class Bound {
    hooks,       // set_recv_timeout and set_send_timeout
    short_wait,  // no hooks; the socket's own timeout of 20 ms, declared as recv/send_wait_ms
    long_wait,   // no hooks; the socket's own 5 s timeout, declared
};

struct Net : lock_cases::Loopback {
    NetworkContext_t network;
    resplock_transport_t ctx;
    resplock_port_t port_{};

    explicit Net(Bound bound = Bound::hooks) {
        plaintext_init(&network);
        resplock_transport_config_t config = plaintext_config(&network);
        if (bound != Bound::hooks) {
            config.set_recv_timeout = nullptr;
            config.set_send_timeout = nullptr;
            network.socket_timeout_ms = bound == Bound::short_wait ? 20U : 5000U;
            config.recv_wait_ms = network.socket_timeout_ms;
            config.send_wait_ms = network.socket_timeout_ms;
        }
        if (resplock_transport_port_init(&ctx, &config, &port_) != RESPLOCK_STATUS_ok) {
            check::fail(__FILE__, __LINE__, "resplock_transport_port_init refused a full config");
        }
    }
    ~Net() { port_.close(port_.ctx); }
    Net(const Net&) = delete;
    Net& operator=(const Net&) = delete;
    const resplock_port_t& port() const { return port_; }
};

}  // namespace transport_net

#endif  // RESPLOCK_TESTS_TRANSPORT_NET_HPP
