/* resplock C API: a master found through Redis Sentinel (see resplock/ha/sentinel.hpp for the
 * full reference).
 *
 * resplock_sentinel_init() builds the router in the caller's storage and sets conn_config->router:
 * a connection made with that config asks the sentinels for the master named `master_name`,
 * confirms it with ROLE and follows its failovers (re-resolving after a lost connection and after
 * a -READONLY reply, within each call's deadline). The sentinels' hosts and the master name are
 * copied; the resplock_sentinel_t must outlive the connection and serve only it.
 *
 *     static resplock_sentinel_t sentinel;
 *     const resplock_sentinel_addr_t sentinels[2] = {{"10.0.0.2", 26379}, {"10.0.0.3", 26379}};
 *     resplock_conn_config_t cfg;
 *     resplock_conn_config_init(&cfg);
 *     resplock_sentinel_init(&sentinel, "mymaster", sentinels, 2, &cfg);
 *     resplock_conn_init(&conn, &port, &cfg, buf, sizeof buf);
 *
 * Without links (resplock_sentinel_init_linked()) the sentinels are asked one after another over
 * the connection itself, each with a share of the time.
 *
 * Statuses a connection then adds: connect_failed or timeout (no sentinel reachable), no_host
 * (the master name is unknown to the sentinels that answered), read_only (a node was found but
 * never confirmed as master before the deadline).
 */
#ifndef RESPLOCK_SENTINEL_H
#define RESPLOCK_SENTINEL_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/c_api/lock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Storage size of resplock::Sentinel (see lock.h for how the sizes follow config.h): a
 * resplock::Router (four function pointers), sentinels_ (RESPLOCK_MAX_SENTINELS resplock::Node),
 * links_ (as many pointers), master_ (a Node), name_ (RESPLOCK_MAX_HOST_LEN + 1 chars), a
 * uint32_t, then seven uint8_t and bool. */
#define RESPLOCK_SENTINEL_STORAGE                                                                 \
    RESPLOCK_SZ_ALIGN(                                                                            \
        RESPLOCK_SZ_THEN(RESPLOCK_SZ_ALIGN(4 * sizeof(void*) +                                    \
                                               (size_t)RESPLOCK_MAX_SENTINELS * RESPLOCK_SZ_NODE, \
                                           sizeof(void*)) +                                       \
                             (size_t)RESPLOCK_MAX_SENTINELS * sizeof(void*) + RESPLOCK_SZ_NODE +  \
                             RESPLOCK_MAX_HOST_LEN + 1,                                           \
                         uint32_t) +                                                              \
            7,                                                                                    \
        sizeof(void*))

/* Storage size of resplock::Sentinel::Link: a resplock_port_t, a uint16_t and two bool, then
 * RESPLOCK_MAX_HOST_LEN + 64 chars. */
#define RESPLOCK_SENTINEL_LINK_STORAGE \
    RESPLOCK_SZ_ALIGN(sizeof(resplock_port_t) + 4 + RESPLOCK_MAX_HOST_LEN + 64, sizeof(void*))

/* A Sentinel router. Opaque. */
typedef struct resplock_sentinel {
    union {
        uint64_t align_u64;
        void* align_ptr;
        unsigned char bytes[RESPLOCK_SENTINEL_STORAGE];
    } opaque;
} resplock_sentinel_t;

/* A link of the router's own to one sentinel (see resplock_sentinel_init_linked()). Opaque. */
typedef struct resplock_sentinel_link {
    union {
        uint64_t align_u64;
        void* align_ptr;
        unsigned char bytes[RESPLOCK_SENTINEL_LINK_STORAGE];
    } opaque;
} resplock_sentinel_link_t;

/* One sentinel's address: a host name or address (NUL-terminated, 1..RESPLOCK_MAX_HOST_LEN bytes;
 * copied) and its port (Sentinel's usual one is 26379). */
typedef struct resplock_sentinel_addr {
    const char* host;
    uint16_t port;
} resplock_sentinel_addr_t;

/* Builds the router over sentinels[0..count) (asked in that order) for the master `master_name`
 * (1..RESPLOCK_MAX_HOST_LEN bytes; copied), and sets conn_config->router to it. Returns ok, or
 * invalid_argument (a NULL pointer, count 0 or over RESPLOCK_MAX_SENTINELS, an empty or too long
 * host or name, port 0), leaving conn_config unchanged. */
resplock_status_t resplock_sentinel_init(resplock_sentinel_t* sentinel, const char* master_name,
                                         const resplock_sentinel_addr_t* sentinels, size_t count,
                                         resplock_conn_config_t* conn_config);

/* resplock_sentinel_init() with a link of the router's own to each sentinel: links[i], built in
 * the caller's storage over ports[i] (copied), reaches sentinels[i]. Each port must have a
 * transport context of its own, used by nothing else (a port holds one connection: never the
 * connection's own). The sentinels are then asked all at once, and the connection to the master
 * stays open while they are: a sentinel that does not answer costs nothing while a majority of
 * them does. links must outlive the router. Returns ok, or invalid_argument as
 * resplock_sentinel_init() (also for NULL links or ports). */
resplock_status_t resplock_sentinel_init_linked(resplock_sentinel_t* sentinel,
                                                const char* master_name,
                                                const resplock_sentinel_addr_t* sentinels,
                                                resplock_sentinel_link_t* links,
                                                const resplock_port_t* ports, size_t count,
                                                resplock_conn_config_t* conn_config);

/* Closes the router's links to the sentinels, if it has any (the connection to the master is
 * resplock_conn_deinit()'s). The router may be used again: a link reconnects when next needed.
 * NULL is ignored. */
void resplock_sentinel_deinit(resplock_sentinel_t* sentinel);

/* What the last resolution found, for messages: how many sentinels it asked (in order from the
 * first), and whether one of them did not know the master name (1) or not (0). */
size_t resplock_sentinel_tried(const resplock_sentinel_t* sentinel);
int resplock_sentinel_name_unknown(const resplock_sentinel_t* sentinel);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_SENTINEL_H */
