// router_for() (see routing.hpp).
#include "routing.hpp"

namespace resplock_cli {

resplock::Router* router_for(const Endpoint& /*ep*/, int /*index*/) {
    return nullptr;
}

}  // namespace resplock_cli
