/* resplock port interface: everything the library needs from the platform, as plain C function
 * pointers and one opaque context. The core calls no OS function; it only calls these.
 *
 * Time is a 32-bit millisecond count on a monotonic clock that may wrap (like lwIP's sys_now());
 * the library only ever subtracts two readings, so wrap-around is harmless. The clock must keep
 * counting while the device sleeps or the system is suspended (Linux: CLOCK_BOOTTIME, not
 * CLOCK_MONOTONIC; a microcontroller: a timer that runs in its low-power modes, or one corrected
 * by the sleep time on wake-up): a lock's validity is measured on it, and a clock that stops would
 * let a holder wake up believing in a lock that expired on the server while it slept. Every
 * blocking call receives a timeout in milliseconds and must return within it (a few ms of
 * lateness is fine). */
#ifndef RESPLOCK_PORT_H
#define RESPLOCK_PORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Negative results of connect/send/recv. */
#define RESPLOCK_PORT_OK 0
#define RESPLOCK_PORT_TIMEOUT (-1) /* connect: not established within the timeout */
#define RESPLOCK_PORT_CLOSED (-2)  /* the peer closed the connection (recv/send) */
#define RESPLOCK_PORT_ERROR (-3)   /* any other transport failure */
#define RESPLOCK_PORT_NO_HOST (-4) /* connect: the host name could not be resolved */
#define RESPLOCK_PORT_REFUSED (-5) /* connect: refused or unreachable */

/* An application's source of unpredictable bytes, for ports whose platform has none they can
 * trust (see each port's config): fill buf with len bytes from a cryptographically secure source
 * (a hardware TRNG, or a DRBG seeded from one) and return 0, or anything else on failure. */
typedef int32_t (*resplock_random_fn)(void* user, uint8_t* buf, size_t len);

/* Every port of this project is set up the same way (docs/porting.md):
 *
 *     resplock_status_t resplock_<name>_port_init(resplock_<name>_t* ctx,
 *                                                 const resplock_<name>_config_t* config,
 *                                                 resplock_port_t* out);
 *
 * ctx is the port's caller-owned state (no connection yet after init; it must outlive every use
 * of the port), config is copied (NULL: the defaults, for ports that have them) and *out
 * receives the functions, which act on ctx. A port of your own may have any shape. */
typedef struct resplock_port {
    /* Passed unchanged as the first argument of every function below. */
    void* ctx;

    /* Open a connection to host:port (host is a name or a numeric IPv4/IPv6 address, NUL
     * terminated). Returns RESPLOCK_PORT_OK, _TIMEOUT, _NO_HOST, _REFUSED or _ERROR. A port holds
     * at most one connection; connect is only called when none is open. */
    int32_t (*connect)(void* ctx, const char* host, uint16_t port, uint32_t timeout_ms);

    /* Send up to len bytes. Returns the number of bytes accepted (1..len; fewer than len is a
     * partial send and the library calls again with the rest), 0 if nothing could be sent within
     * timeout_ms, or RESPLOCK_PORT_CLOSED / RESPLOCK_PORT_ERROR. Must never raise SIGPIPE. */
    int32_t (*send)(void* ctx, const uint8_t* data, size_t len, uint32_t timeout_ms);

    /* Receive up to len bytes (len >= 1). Returns the number of bytes stored (1..len), 0 if none
     * arrived within timeout_ms, or RESPLOCK_PORT_CLOSED (orderly close by the peer) /
     * RESPLOCK_PORT_ERROR. Returns as soon as any byte is available. With timeout_ms 0 it must
     * not wait: the library calls it so before each request, to notice a connection the server
     * closed while it was idle, or bytes that answer no request. */
    int32_t (*recv)(void* ctx, uint8_t* buf, size_t len, uint32_t timeout_ms);

    /* Close the connection if one is open. Never fails, never blocks; safe to call twice. */
    void (*close)(void* ctx);

    /* Milliseconds on a monotonic clock that counts through sleep and suspend (never goes back;
     * may wrap at 2^32). */
    uint32_t (*now_ms)(void* ctx);

    /* Sleep for ms milliseconds (may return early, e.g. on a signal; never later than asked by
     * more than the scheduler's granularity). */
    void (*sleep_ms)(void* ctx, uint32_t ms);

    /* Fill buf with len unpredictable bytes from a cryptographically secure source. Returns 0 on
     * success, anything else on failure (the library then refuses to make a token). May be NULL
     * on a platform without one: locks then fail with RESPLOCK_STATUS_random_failed. */
    int32_t (*random)(void* ctx, uint8_t* buf, size_t len);
} resplock_port_t;

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_PORT_H */
