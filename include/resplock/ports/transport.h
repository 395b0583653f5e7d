/* Transport adapter port: resplock over a transport shaped like coreMQTT's TransportInterface_t
 * (a recv/send pair on an opaque network context), plus the application's connect and disconnect,
 * clock, sleep and random source. A FreeRTOS application reuses the plaintext or TLS transport it
 * already has for MQTT: its recv and send functions have exactly the types below.
 *
 * What the transport must provide (docs/porting.md, "Transport adapter"):
 *   - recv(network, buf, len): bytes read (1..len), 0 when none arrived within the transport's
 *     receive timeout, negative on failure; send likewise (1..len accepted, 0 none, negative).
 *   - Its waits must be bounded, and the adapter must know the bound, because every port call
 *     has to return within the timeout the library passes, and the library calls recv with
 *     timeout 0 before each request (the probe: has the server closed the idle connection, or
 *     sent bytes no request asked for?), which must not wait at all. Either
 *       * set_recv_timeout (and set_send_timeout): the adapter sets the time left before each
 *         call, 0 meaning "return at once when nothing is there" (for a socket: MSG_DONTWAIT or
 *         a non-blocking flag, NOT SO_RCVTIMEO = 0, which means "wait forever"); or
 *       * recv_wait_ms (send_wait_ms): the longest one call waits by itself (the socket's fixed
 *         SO_RCVTIMEO), 0 for a transport that never waits (a non-blocking socket). The adapter
 *         calls the transport only while at least that much time is left, and skips the probe
 *         when it is not 0: a connection the server closed while idle is then found only by the
 *         request that follows, which goes out on the dead connection and fails (an acquire with
 *         unknown_outcome) instead of reconnecting first.
 *   - A closed connection: recv and send return config.closed for an orderly close by the peer,
 *     if the transport tells it apart; every other negative result is RESPLOCK_PORT_ERROR.
 *
 * No heap: the state lives in the caller's resplock_transport_t. Usable from C and C++. */
#ifndef RESPLOCK_TRANSPORT_H
#define RESPLOCK_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/core/port.h"
#include "resplock/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The application's network context (coreMQTT's NetworkContext_t is a typedef of it): defined by
 * the application, opaque here. */
struct NetworkContext;

/* coreMQTT's TransportRecv_t and TransportSend_t. */
typedef int32_t (*resplock_transport_recv_fn)(struct NetworkContext* network, void* buf,
                                              size_t len);
typedef int32_t (*resplock_transport_send_fn)(struct NetworkContext* network, const void* buf,
                                              size_t len);

/* Opens the connection to host:port within timeout_ms; returns RESPLOCK_PORT_OK, _TIMEOUT,
 * _NO_HOST, _REFUSED or _ERROR (any other value counts as _ERROR). */
typedef int32_t (*resplock_transport_connect_fn)(struct NetworkContext* network, const char* host,
                                                 uint16_t port, uint32_t timeout_ms);
/* Closes the connection; must not block (no graceful TLS or TCP shutdown that waits). */
typedef void (*resplock_transport_disconnect_fn)(struct NetworkContext* network);
/* Makes the following recv (send) calls wait at most ms for the first byte (for room); 0: return
 * at once when nothing can be done. Returns 0, anything else on failure. */
typedef int32_t (*resplock_transport_timeout_fn)(struct NetworkContext* network, uint32_t ms);

typedef uint32_t (*resplock_transport_now_fn)(void* user);
typedef void (*resplock_transport_sleep_fn)(void* user, uint32_t ms);

typedef struct resplock_transport_config {
    struct NetworkContext* network; /* required: passed to every transport function */
    resplock_transport_recv_fn recv;
    resplock_transport_send_fn send;
    resplock_transport_connect_fn connect;
    resplock_transport_disconnect_fn disconnect;
    /* Bounding the transport's waits (see above): a hook, or the transport's own bound. */
    resplock_transport_timeout_fn set_recv_timeout; /* optional */
    resplock_transport_timeout_fn set_send_timeout; /* optional */
    uint32_t recv_wait_ms; /* without set_recv_timeout: the longest one recv call waits */
    uint32_t send_wait_ms; /* without set_send_timeout: the longest one send call waits */
    /* The negative value recv and send return when the peer closed the connection; 0 when the
     * transport does not tell a close from other failures. */
    int32_t closed;
    /* Milliseconds on a monotonic clock that keeps counting while the device sleeps (port.h);
     * 32 bits, may wrap. Required. */
    resplock_transport_now_fn now_ms;
    resplock_transport_sleep_fn sleep_ms; /* required: e.g. vTaskDelay(pdMS_TO_TICKS(ms)) */
    /* Required for locks: a cryptographically secure source (a hardware TRNG, or a DRBG seeded
     * from one). */
    resplock_random_fn random;
    void* user; /* passed to now_ms, sleep_ms and random */
} resplock_transport_config_t;

typedef struct resplock_transport {
    resplock_transport_config_t config; /* a copy of the config given to init */
    int connected;                      /* the application's connect succeeded, not yet closed */
} resplock_transport_t;

/* How long the adapter sleeps between two calls that returned 0 early (a transport that never
 * waits, or one that woke before its timeout): its polling period. */
#ifndef RESPLOCK_TRANSPORT_POLL_MS
#define RESPLOCK_TRANSPORT_POLL_MS 5U
#endif

/* Initialises ctx (no connection yet) with a copy of config and fills *out with functions that
 * use it. ctx must outlive every use of the port; config need not. Returns ok; invalid_argument
 * (and *out untouched) when ctx, config or out is NULL or network, recv, send, connect,
 * disconnect, now_ms or sleep_ms is missing, or closed is not negative or 0; random_failed when
 * random is NULL: the port is then still filled in but its random is NULL, so locks fail with
 * RESPLOCK_STATUS_random_failed and no token is ever made. */
resplock_status_t resplock_transport_port_init(resplock_transport_t* ctx,
                                               const resplock_transport_config_t* config,
                                               resplock_port_t* out);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_TRANSPORT_H */
