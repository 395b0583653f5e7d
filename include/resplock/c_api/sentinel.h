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
 * resplock::Router (four function pointers), sentinels_ (RESPLOCK_MAX_SENTINELS resplock::Node)
 * and master_ (a Node), name_ (RESPLOCK_MAX_HOST_LEN + 1 chars), then seven uint8_t and bool. */
#define RESPLOCK_SENTINEL_STORAGE                                                   \
    RESPLOCK_SZ_ALIGN(4 * sizeof(void*) +                                           \
                          (size_t)(RESPLOCK_MAX_SENTINELS + 1) * RESPLOCK_SZ_NODE + \
                          RESPLOCK_MAX_HOST_LEN + 1 + 7,                            \
                      sizeof(void*))

/* A Sentinel router. Opaque. */
typedef struct resplock_sentinel {
    union {
        uint64_t align_u64;
        void* align_ptr;
        unsigned char bytes[RESPLOCK_SENTINEL_STORAGE];
    } opaque;
} resplock_sentinel_t;

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

/* What the last resolution found, for messages: how many sentinels it asked (in order from the
 * first), and whether one of them did not know the master name (1) or not (0). */
size_t resplock_sentinel_tried(const resplock_sentinel_t* sentinel);
int resplock_sentinel_name_unknown(const resplock_sentinel_t* sentinel);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_SENTINEL_H */
