// The lock against a real redis-server over the POSIX port: the scripts' digests, every outcome
// of acquire, release, extend and query, the NOSCRIPT fallback after SCRIPT FLUSH, expiry, and
// waiting for a holder. The cases live in lock_cases.hpp, shared with the lwIP suite.
#include "lock_cases.hpp"
#include "ports.hpp"
#include "redis_server.hpp"
#include "resplock/ports/posix.h"

namespace {

// POSIX sockets straight to the server on 127.0.0.1.
struct PosixNet : lock_cases::Loopback {
    resplock_posix_t ctx;
    resplock_port_t port_ = support::posix_port(ctx);

    PosixNet() = default;
    PosixNet(const PosixNet&) = delete;
    PosixNet& operator=(const PosixNet&) = delete;
    const resplock_port_t& port() const { return port_; }
};

}  // namespace

RESPLOCK_LOCK_CASES(PosixNet)
