/* lwIP raw-API port: TCP over lwIP's raw/callback API (tcp_new, tcp_connect, tcp_write,
 * tcp_output, tcp_recv, tcp_err), for the bare-metal configuration NO_SYS=1 with no
 * sockets and no RTOS. It also builds with NO_SYS=0, where every call must then be made from
 * lwIP's tcpip thread (or under LOCK_TCPIP_CORE), like any raw-API code.
 *
 * Super-loop: while a call waits, the port drives the stack itself through the application's
 * poll hook, which must do one round of what the main loop does for lwIP (run the netif
 * driver's input, then sys_check_timeouts()) and return without blocking. So each blocking call
 * returns within its timeout with no thread, and sleep_ms() keeps the stack running too.
 *
 * Received bytes go into a fixed ring inside the context (RESPLOCK_LWIP_RAW_RX_SIZE bytes),
 * never into a growing pbuf chain. lwIP is told a byte was taken (tcp_recved, which reopens the
 * window) only once it is in the ring; a segment that does not fit is held (at most one pbuf) or
 * refused to lwIP, which keeps it and delivers it again later, so a reply larger than the ring is
 * back-pressured, not dropped. A reset or an error reported by lwIP's tcp_err callback becomes
 * RESPLOCK_PORT_CLOSED (reset by the peer) or RESPLOCK_PORT_ERROR (anything else) on the next
 * send or recv; a reset answer to the SYN is RESPLOCK_PORT_REFUSED. The pcb is released on every
 * path: close (tcp_close, or tcp_abort when lwIP has no memory for the FIN), a connect that
 * times out (tcp_abort), and lwIP's own error path (lwIP frees the pcb before calling tcp_err;
 * the port then forgets it).
 *
 * Hosts: numeric IPv4/IPv6 addresses (as the stack is built for), or names through
 * dns_gethostbyname() when LWIP_DNS is enabled, waited for within the connect timeout; without
 * LWIP_DNS a name gives RESPLOCK_PORT_NO_HOST. lwIP cannot cancel a lookup: one given up on at the
 * deadline stays asked until lwIP's answer or last retry, and that late answer is dropped, never
 * taken for a later lookup nor written to a context (which may be closed or gone by then). Such a
 * lookup holds one of lwIP's DNS requests until then; with all of them held, a name gives
 * RESPLOCK_PORT_NO_HOST at once.
 *
 * Clock: the application's now hook, or lwIP's sys_now() (NO_SYS=1 needs the application to
 * provide it anyway, e.g. from SysTick). It must keep counting through the low-power modes the
 * device sleeps in (see port.h): lock validity is measured on it.
 *
 * Random source: lwIP has none that is cryptographically secure, and lock tokens must be
 * unguessable. The application supplies one (a hardware TRNG, or a DRBG seeded from one); without
 * it, resplock_lwip_raw_port_init() returns random_failed and the port's random is NULL, so every
 * acquire fails with RESPLOCK_STATUS_random_failed and no token is ever made.
 *
 * No heap: the state lives in the caller's resplock_lwip_raw_t (lwIP's pcb and pbufs come from
 * lwIP's own pools), and with LWIP_DNS in one static table shared by all contexts, a slot (a
 * pointer and a flag) per lwIP DNS request (DNS_MAX_REQUESTS), which lwIP's DNS callbacks point at.
 * Include this header where lwIP's headers (and lwipopts.h) are found.
 * Usable from C and C++. */
#ifndef RESPLOCK_LWIP_RAW_H
#define RESPLOCK_LWIP_RAW_H

#include "lwip/ip_addr.h"
#include "resplock/core/port.h"
#include "resplock/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of the receive ring in each context (1..65535): the most received data the port holds
 * before it stops taking segments from lwIP. A lock's replies are a few dozen bytes; 512 leaves
 * room for the longest error replies. */
#ifndef RESPLOCK_LWIP_RAW_RX_SIZE
#define RESPLOCK_LWIP_RAW_RX_SIZE 512
#endif

struct tcp_pcb;
struct pbuf;

/* One round of the application's lwIP main loop (netif input, sys_check_timeouts()); must not
 * block for long. Called repeatedly while a port call waits (and the clock is read between
 * calls), so it may wait for the next interrupt (WFI) to save power, provided a periodic one
 * such as the millisecond tick wakes it. */
typedef void (*resplock_lwip_raw_poll_fn)(void* user);
/* Milliseconds on the application's monotonic clock (see port.h). */
typedef uint32_t (*resplock_lwip_raw_clock_fn)(void* user);

typedef struct resplock_lwip_raw_config {
    resplock_lwip_raw_poll_fn poll; /* required: drives the stack while a call waits */
    void* poll_user;                /* passed to poll */
    resplock_random_fn random;      /* required: see "Random source" above */
    void* random_user;              /* passed to random */
    resplock_lwip_raw_clock_fn now; /* optional: NULL uses lwIP's sys_now() */
    void* now_user;                 /* passed to now */
} resplock_lwip_raw_config_t;

/* The port's state; treat its fields as private. */
typedef struct resplock_lwip_raw {
    resplock_lwip_raw_config_t config; /* a copy of the config given to init */
    struct tcp_pcb* pcb;               /* the connection, or NULL */
    struct pbuf* held;                 /* a received pbuf only partly taken into the ring */
    uint16_t held_offset;              /* bytes of held already taken */
    uint16_t rx_head;                  /* index of the oldest byte in rx */
    uint16_t rx_len;                   /* bytes in rx */
    int8_t state;                      /* connection state (lwip_raw.c) */
    int8_t error;                      /* the lwIP err_t that ended the connection */
    uint8_t peer_closed;               /* the peer's FIN arrived (after the bytes in rx/held) */
    uint8_t dns_state;                 /* name lookup in progress / done / failed */
    ip_addr_t dns_addr;                /* the address a lookup found */
    uint8_t rx[RESPLOCK_LWIP_RAW_RX_SIZE];
} resplock_lwip_raw_t;

/* Initialises ctx (no connection yet) with a copy of config and fills *out with functions that
 * use it. ctx must outlive every use of the port and must not move while connected (lwIP's
 * callbacks point at it); config need not. Returns ok; invalid_argument when ctx, out, config or
 * config->poll is NULL (nothing is filled in); random_failed when config->random is NULL: the
 * port is then still filled in (transport, clock and sleep work) but its random is NULL, so locks
 * fail with RESPLOCK_STATUS_random_failed. */
resplock_status_t resplock_lwip_raw_port_init(resplock_lwip_raw_t* ctx,
                                              const resplock_lwip_raw_config_t* config,
                                              resplock_port_t* out);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_LWIP_RAW_H */
