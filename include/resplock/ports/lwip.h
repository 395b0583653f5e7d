/* lwIP port: TCP over lwIP's sockets API (NO_SYS=0, LWIP_SOCKET=1), lwIP's sys_now() clock and
 * sys_msleep() sleep. sys_now() must keep counting through the low-power modes the device sleeps
 * in (see port.h): lock validity is measured on it.
 *
 * Connect and every send/recv are non-blocking calls driven by lwip_poll() against a deadline on
 * sys_now(), so each honours the timeout the library passes. Hosts: numeric IPv4 or IPv6
 * addresses (as the stack is built for), or a name through lwip_getaddrinfo() when LWIP_DNS is
 * enabled; otherwise a name gives RESPLOCK_PORT_NO_HOST. A name lookup is bounded by lwIP's DNS
 * timeouts, not by the connect timeout. lwIP raises no signals, so no SIGPIPE is possible.
 * errno is never read (another task may overwrite a global one): failures are told apart through
 * the socket's SO_ERROR and whether the connection still has a peer.
 *
 * Random source: lwIP has no cryptographically secure generator (LWIP_RAND() is typically
 * rand()), and lock tokens must be unguessable. The application therefore supplies one in the
 * config (a hardware TRNG, or a DRBG seeded from one). Without it, resplock_lwip_port_init()
 * returns random_failed and the port it fills in has random == NULL, so that even if the result
 * is ignored every acquire fails with RESPLOCK_STATUS_random_failed and no token is ever made.
 *
 * No heap: the state lives in the caller's resplock_lwip_t. Usable from C and C++. */
#ifndef RESPLOCK_LWIP_H
#define RESPLOCK_LWIP_H

#include "resplock/core/port.h"
#include "resplock/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sleep for ms milliseconds (e.g. an RTOS delay). */
typedef void (*resplock_lwip_sleep_fn)(void* user, uint32_t ms);

typedef struct resplock_lwip_config {
    resplock_random_fn random;    /* required: see "Random source" above; called from the task
                                   * that uses the lock */
    void* random_user;            /* passed to random */
    resplock_lwip_sleep_fn sleep; /* optional: NULL uses lwIP's sys_msleep() */
    void* sleep_user;             /* passed to sleep */
} resplock_lwip_config_t;

typedef struct resplock_lwip {
    int sock;                      /* the lwIP socket, or -1 */
    resplock_lwip_config_t config; /* a copy of the config given to resplock_lwip_port_init() */
} resplock_lwip_t;

/* Initialises ctx (no connection yet) with a copy of config and fills *out with functions that
 * use it. ctx must outlive every use of the port; config need not. Returns ok; invalid_argument
 * when ctx or out is NULL; random_failed when config or config->random is NULL: the port is then
 * still filled in (transport, clock and sleep work) but its random is NULL, so locks fail with
 * RESPLOCK_STATUS_random_failed. */
resplock_status_t resplock_lwip_port_init(resplock_lwip_t* ctx,
                                          const resplock_lwip_config_t* config,
                                          resplock_port_t* out);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_LWIP_H */
