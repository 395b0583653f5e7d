// The C API of the Cluster router: built inside the caller's resplock_cluster_t.
#include "resplock/c_api/cluster.h"

#include <new>

#include "c_api/handles.hpp"
#include "resplock/ha/cluster.hpp"

using resplock::Cluster;

static_assert(resplock::c_api::storage_fits<Cluster, resplock_cluster_t>(),
              "RESPLOCK_CLUSTER_STORAGE is too small for this target");
static_assert(resplock::c_api::storage_tight<Cluster, resplock_cluster_t>(),
              "RESPLOCK_CLUSTER_STORAGE is larger than needed: its formula drifted from the class");

extern "C" {

resplock_status_t resplock_cluster_init(resplock_cluster_t* cluster,
                                        resplock_conn_config_t* conn_config) {
    if (cluster == nullptr || conn_config == nullptr) return RESPLOCK_STATUS_invalid_argument;
    resplock::Router* router = new (cluster->opaque.bytes) Cluster();
    // resplock_conn_init() turns it back into the Router it is.
    conn_config->router = reinterpret_cast<struct resplock_router*>(router);
    return RESPLOCK_STATUS_ok;
}

}  // extern "C"
