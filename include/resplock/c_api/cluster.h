/* resplock C API: Redis Cluster redirections (C99). A cluster router makes a connection follow
 * the cluster's -MOVED and -ASK replies, so that conn_config.host:port may name any node of a
 * Redis Cluster (see resplock/ha/cluster.hpp for what is followed and the limits). Nothing is
 * allocated; a program that never calls resplock_cluster_init() does not link it.
 *
 *     static resplock_cluster_t cluster;
 *     resplock_conn_config_t cfg = ...;   (host:port of any node)
 *     resplock_cluster_init(&cluster, &cfg);
 *     resplock_conn_init(&conn, &port, &cfg, buf, sizeof buf);
 *
 * Besides the connection's statuses, its commands may then return too_many_redirects (more than
 * RESPLOCK_MAX_REDIRECTS redirections for one command), protocol_error (a malformed redirection)
 * and too_large (a redirection to a host over RESPLOCK_MAX_HOST_LEN bytes). Each redirection
 * followed is reported to the connection's observer as a `redirect` event (resplock/core/event.h).
 */
#ifndef RESPLOCK_CLUSTER_H
#define RESPLOCK_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/c_api/lock.h"
#include "resplock/core/config.h"
#include "resplock/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Storage size of resplock::Cluster (see lock.h for how the sizes follow config.h): a
 * resplock::Router (four function pointers), node_ and asked_ (resplock::Node). */
#define RESPLOCK_CLUSTER_STORAGE \
    RESPLOCK_SZ_ALIGN(4 * sizeof(void*) + 2 * RESPLOCK_SZ_NODE, sizeof(void*))

/* Opaque: use only through the functions below. It must outlive the connection it is given to and
 * serve that one connection only. */
typedef struct resplock_cluster {
    union {
        uint64_t align_u64;
        void* align_ptr;
        unsigned char bytes[RESPLOCK_CLUSTER_STORAGE];
    } opaque;
} resplock_cluster_t;

/* Makes `cluster` a router starting at conn_config->host:port and sets conn_config->router to it;
 * give conn_config to resplock_conn_init() afterwards. Returns ok, or invalid_argument for a NULL
 * argument. */
resplock_status_t resplock_cluster_init(resplock_cluster_t* cluster,
                                        resplock_conn_config_t* conn_config);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_CLUSTER_H */
