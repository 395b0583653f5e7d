/* A plaintext TCP transport for POSIX shaped like coreMQTT's: recv and send take a
 * NetworkContext, return the bytes moved, 0 when the socket's timeout (SO_RCVTIMEO, SO_SNDTIMEO)
 * passed with nothing done, and a negative value on failure. Written the way an application
 * writes one (C99, blocking socket with timeouts), plus the hooks the resplock adapter asks for
 * and a few knobs and counters that the tests use to inject faults and to observe the adapter. */
#ifndef RESPLOCK_TESTS_PLAINTEXT_POSIX_H
#define RESPLOCK_TESTS_PLAINTEXT_POSIX_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/ports/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PLAINTEXT_CLOSED (-100) /* recv/send: the peer closed the connection */
#define PLAINTEXT_FAILED (-1)   /* recv/send: any other failure */

struct NetworkContext {
    int fd;
    uint32_t socket_timeout_ms; /* SO_RCVTIMEO and SO_SNDTIMEO set at connect */
    int recv_dontwait;          /* set_recv_timeout(0) was the last call: MSG_DONTWAIT */
    int send_dontwait;
    /* Knobs. */
    size_t send_max; /* > 0: each send takes at most this many bytes */
    int fail_recv;   /* > 0: that many next recv calls fail (PLAINTEXT_FAILED) */
    int tell_closed; /* 0: an orderly close is reported as PLAINTEXT_FAILED too */
    /* What the adapter did. */
    unsigned connects;
    unsigned disconnects;
    unsigned recv_calls;
    unsigned send_calls;
    unsigned probes;       /* recv calls made with MSG_DONTWAIT */
    unsigned timeout_sets; /* set_recv_timeout calls */
    uint32_t last_recv_timeout_ms;
};
typedef struct NetworkContext NetworkContext_t;

/* A fresh, unconnected context with a 5 s socket timeout (as FreeRTOS demos use). */
void plaintext_init(NetworkContext_t* network);

int32_t plaintext_connect(NetworkContext_t* network, const char* host, uint16_t port,
                          uint32_t timeout_ms);
void plaintext_disconnect(NetworkContext_t* network);
int32_t plaintext_recv(NetworkContext_t* network, void* buf, size_t len);
int32_t plaintext_send(NetworkContext_t* network, const void* buf, size_t len);
int32_t plaintext_set_recv_timeout(NetworkContext_t* network, uint32_t ms);
int32_t plaintext_set_send_timeout(NetworkContext_t* network, uint32_t ms);

/* CLOCK_BOOTTIME in ms, nanosleep, getrandom. */
uint32_t plaintext_now_ms(void* user);
void plaintext_sleep_ms(void* user, uint32_t ms);
int32_t plaintext_random(void* user, uint8_t* buf, size_t len);

/* The adapter's config over this transport, with both timeout hooks. */
resplock_transport_config_t plaintext_config(NetworkContext_t* network);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_TESTS_PLAINTEXT_POSIX_H */
