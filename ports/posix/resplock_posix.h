/* POSIX port: TCP over BSD sockets (IPv4 and IPv6), CLOCK_MONOTONIC, nanosleep, getrandom.
 * Numeric addresses are parsed without allocation; a host name goes through getaddrinfo, whose
 * result list the C library allocates and frees (the only allocation on this path). */
#ifndef RESPLOCK_POSIX_H
#define RESPLOCK_POSIX_H

#include "resplock/port.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct resplock_posix {
    int fd; /* the socket, or -1 */
} resplock_posix_t;

/* Initialises ctx (no connection yet) and returns a port whose functions use it. ctx must
 * outlive every use of the port. */
resplock_port_t resplock_posix_port(resplock_posix_t* ctx);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_POSIX_H */
