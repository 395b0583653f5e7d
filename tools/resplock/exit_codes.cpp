// The status -> exit code mapping of exit_codes.hpp.
#include "exit_codes.hpp"

namespace resplock_cli {

using resplock::Status;

int exit_code(Status s) {
    switch (s) {
        case Status::ok:
            return exit_ok;
        case Status::not_owner:
        case Status::expired:
            return exit_not_owner;
        case Status::busy:
            return exit_busy;
        case Status::invalid_argument:
            return exit_usage;
        case Status::timeout:
        case Status::no_host:
        case Status::connect_failed:
        case Status::closed:
        case Status::io_error:
        case Status::unknown_outcome:
        // A server that cannot serve the lock now, though it answered: retrying later may work.
        case Status::loading:
        case Status::server_busy:
        case Status::out_of_memory:
        case Status::read_only:
        case Status::random_failed:  // cannot happen with getrandom(); nothing was sent
        // A cluster that keeps redirecting (slots moving, or a misconfigured node), a write that
        // will not last (too few replicas acknowledged it, or its node is no longer the master:
        // it was released), a cluster down or resharding: each may pass.
        case Status::too_many_redirects:
        case Status::not_replicated:
        case Status::try_again:    // CLUSTERDOWN, TRYAGAIN: a cluster failing over or resharding
        case Status::no_replicas:  // NOREPLICAS: a master short of replicas refuses writes
            return exit_unavailable;
        case Status::auth_required:
        case Status::auth_failed:
        case Status::no_permission:
            return exit_denied;
        case Status::incomplete:
        case Status::protocol_error:
        case Status::too_large:
        case Status::server_error:
        case Status::no_script:
        case Status::wrong_type:
            return exit_protocol;
    }
    return exit_protocol;
}

}  // namespace resplock_cli
