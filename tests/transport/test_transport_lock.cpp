// The lock's integration cases (lock_cases.hpp, the same code the POSIX and lwIP suites run) over
// the transport adapter port, on a coreMQTT-shaped plaintext POSIX transport with timeout hooks,
// against a real redis-server on 127.0.0.1.
#include "lock_cases.hpp"
#include "transport_net.hpp"

RESPLOCK_LOCK_CASES(transport_net::Net)
