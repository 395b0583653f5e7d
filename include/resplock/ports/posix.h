/* POSIX port: TCP over BSD sockets (IPv4 and IPv6), CLOCK_BOOTTIME (CLOCK_MONOTONIC where there is
 * none), nanosleep, and getrandom / getentropy unless the config supplies a random source.
 * Numeric addresses are parsed without allocation; a host name goes through getaddrinfo, whose
 * result list the C library allocates and frees (the only allocation on this path). */
#ifndef RESPLOCK_POSIX_H
#define RESPLOCK_POSIX_H

#include "resplock/core/port.h"
#include "resplock/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct resplock_posix_config {
    /* The random source for lock tokens; NULL: the system's (getrandom, or getentropy). */
    resplock_random_fn random;
    void* random_user; /* passed to random */
} resplock_posix_config_t;

/* Caller-owned state: the socket and a copy of the config. */
typedef struct resplock_posix {
    int fd; /* the socket, or -1 */
    resplock_posix_config_t config;
} resplock_posix_t;

/* Initialises ctx (no connection yet) with a copy of config (NULL: the defaults) and fills *out
 * with functions that use it. ctx must outlive every use of the port. Returns ok, or
 * invalid_argument when ctx or out is NULL. */
resplock_status_t resplock_posix_port_init(resplock_posix_t* ctx,
                                           const resplock_posix_config_t* config,
                                           resplock_port_t* out);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_POSIX_H */
