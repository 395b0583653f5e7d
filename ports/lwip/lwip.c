/* lwIP port: non-blocking lwIP sockets driven by lwip_poll() against deadlines on sys_now().
 * Every wait is bounded by the timeout the library passes; the deadline arithmetic is done on
 * 32-bit wrapping milliseconds, like the library's own.
 *
 * errno is never read: lwIP sets the C library's errno, which on many RTOS builds is one global
 * that another task's socket call can overwrite between a failed call here and its reading. What
 * went wrong is asked of the socket instead (socket_failure below). */
#ifndef _POSIX_C_SOURCE
/* Strict C99 hides POSIX from the C library's headers; lwIP's arch.h then misses SSIZE_MAX and
 * declares its own ssize_t, at odds with the system's. */
#define _POSIX_C_SOURCE 200112L
#endif

#include "resplock/ports/lwip.h"

#include "lwip/opt.h"

#include "lwip/def.h"
#include "lwip/errno.h"
#include "lwip/sockets.h"
#include "lwip/sys.h"
#if LWIP_DNS
#include "lwip/netdb.h"
#endif
#if LWIP_SOCKET_EXTERNAL_HEADERS
/* Builds that take their socket definitions from the system (e.g. Debian's liblwip) also take
 * F_SETFL, O_NONBLOCK and TCP_NODELAY from it; native builds get them from lwip/sockets.h. */
#include <fcntl.h>
#include <netinet/tcp.h>
#endif

#include <string.h>

#if NO_SYS || !LWIP_SOCKET
#error "the resplock lwIP port needs lwIP's sockets API (NO_SYS=0, LWIP_SOCKET=1)"
#endif
#if !LWIP_SOCKET_POLL
#error "the resplock lwIP port needs lwip_poll() (LWIP_SOCKET_POLL=1)"
#endif

enum wait_result { WAIT_READY, WAIT_TIMEOUT, WAIT_FAILED };

/* Milliseconds until deadline on sys_now(), 0 once it has passed. */
static uint32_t left_ms(uint32_t deadline) {
    const uint32_t left = deadline - (uint32_t)sys_now();
    return left > 0x7fffffffU ? 0U : left;
}

/* Waits until events are signalled on sock or the deadline passes. POLLERR counts as ready: the
 * following socket call reports what happened. */
static enum wait_result wait_for(int sock, short events, uint32_t deadline) {
    for (;;) {
        struct pollfd p;
        const uint32_t left = left_ms(deadline);
        int r = 0;
        p.fd = sock;
        p.events = events;
        p.revents = 0;
        r = lwip_poll(&p, 1, (int)left);
        if (r > 0) return (p.revents & POLLNVAL) != 0 ? WAIT_FAILED : WAIT_READY;
        if (r < 0) return WAIT_FAILED; /* lwIP raises no signals: never EINTR */
        /* Nothing yet: give up only once a wait with no time left has come back empty, so an
         * early wake-up never shortens the timeout. */
        if (left == 0) return WAIT_TIMEOUT;
    }
}

static void close_socket(resplock_lwip_t* self) {
    if (self->sock >= 0) {
        (void)lwip_close(self->sock);
        self->sock = -1;
    }
}

/* The outcome of a failed connect in port terms, from the socket's SO_ERROR. lwIP reports a
 * reset answer to the SYN (the usual refusal) as ECONNRESET and a missing route as
 * EHOSTUNREACH. */
static int32_t connect_error(int err) {
    switch (err) {
        case ECONNREFUSED:
        case ECONNRESET:
        case ECONNABORTED:
        case EHOSTUNREACH:
        case ENETUNREACH:
        case EADDRNOTAVAIL:
        case EAFNOSUPPORT:
            return RESPLOCK_PORT_REFUSED;
        case ETIMEDOUT:
            return RESPLOCK_PORT_TIMEOUT;
        default:
            return RESPLOCK_PORT_ERROR;
    }
}

/* The socket's pending error (SO_ERROR, which lwIP 2.1 clears as it reports it), 0 if none. */
static int pending_error(int sock) {
    int err = 0;
    socklen_t err_len = (socklen_t)sizeof err;
    if (lwip_getsockopt(sock, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0) return EBADF;
    return err;
}

/* True while the connection exists (or is being set up): lwIP answers getpeername only for a
 * TCP connection that is neither closed nor aborted. */
static int has_peer(int sock) {
    struct sockaddr_storage peer;
    socklen_t peer_len = (socklen_t)sizeof peer;
    return lwip_getpeername(sock, (struct sockaddr*)&peer, &peer_len) == 0;
}

/* Why a non-blocking send or recv failed, without errno: RESPLOCK_PORT_CLOSED or _ERROR, or 0 when
 * the connection is intact and the call only could not proceed now (would block, or lwIP was
 * short of buffers). A reset is reported once as a pending error; a failing call may already have
 * consumed it, and then the connection is simply gone. */
static int32_t socket_failure(int sock) {
    const int err = pending_error(sock);
    if (err == ECONNRESET || err == ENOTCONN || err == EPIPE) return RESPLOCK_PORT_CLOSED;
    if (err != 0) return RESPLOCK_PORT_ERROR;
    return has_peer(sock) ? 0 : RESPLOCK_PORT_CLOSED;
}

/* Connects a fresh socket to one address before the deadline; on RESPLOCK_PORT_OK *out holds
 * it, otherwise no socket is left open. */
static int32_t connect_address(const struct sockaddr* addr, socklen_t addr_len, uint32_t deadline,
                               int* out) {
    const int one = 1;
    int sock = lwip_socket(addr->sa_family, SOCK_STREAM, IPPROTO_TCP);
    if (sock < 0) return RESPLOCK_PORT_ERROR; /* out of sockets or memory */
    if (lwip_fcntl(sock, F_SETFL, O_NONBLOCK) != 0) {
        (void)lwip_close(sock);
        return RESPLOCK_PORT_ERROR;
    }
    /* Requests are small and each waits for its reply: Nagle's delay would only add latency. */
    (void)lwip_setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, (socklen_t)sizeof one);

    if (lwip_connect(sock, addr, addr_len) != 0) {
        /* In progress (the usual answer of a non-blocking connect): the SYN is out and the
         * connection has a peer. Otherwise lwIP failed it at once, which for a valid address
         * means no route to it (EHOSTUNREACH, left in errno only). */
        enum wait_result w = WAIT_FAILED;
        int err = 0;
        if (!has_peer(sock)) {
            (void)lwip_close(sock);
            return RESPLOCK_PORT_REFUSED;
        }
        w = wait_for(sock, (short)POLLOUT, deadline);
        if (w != WAIT_READY) {
            (void)lwip_close(sock);
            return w == WAIT_TIMEOUT ? RESPLOCK_PORT_TIMEOUT : RESPLOCK_PORT_ERROR;
        }
        err = pending_error(sock);
        if (err == 0 && !has_peer(sock)) err = ECONNRESET; /* failed, its error already taken */
        if (err != 0) {
            (void)lwip_close(sock);
            return connect_error(err);
        }
    }
    *out = sock;
    return RESPLOCK_PORT_OK;
}

/* Connects to a numeric address. Returns 1 and sets *result when host is one, 0 otherwise. */
static int connect_numeric(const char* host, uint16_t port, uint32_t deadline, int* out,
                           int32_t* result) {
#if LWIP_IPV4
    {
        struct sockaddr_in v4;
        memset(&v4, 0, sizeof v4);
        if (lwip_inet_pton(AF_INET, host, &v4.sin_addr) == 1) {
            v4.sin_family = AF_INET;
            v4.sin_port = lwip_htons(port);
            *result =
                connect_address((const struct sockaddr*)&v4, (socklen_t)sizeof v4, deadline, out);
            return 1;
        }
    }
#endif
#if LWIP_IPV6
    {
        struct sockaddr_in6 v6;
        memset(&v6, 0, sizeof v6);
        if (lwip_inet_pton(AF_INET6, host, &v6.sin6_addr) == 1) {
            v6.sin6_family = AF_INET6;
            v6.sin6_port = lwip_htons(port);
            *result =
                connect_address((const struct sockaddr*)&v6, (socklen_t)sizeof v6, deadline, out);
            return 1;
        }
    }
#endif
    (void)host;
    (void)port;
    (void)deadline;
    (void)out;
    (void)result;
    return 0;
}

#if LWIP_DNS
/* Resolves a name with lwIP's resolver (its result comes from lwIP's own memory pools) and
 * connects to the address it gives. */
static int32_t connect_by_name(const char* host, uint16_t port, uint32_t deadline, int* out) {
    struct addrinfo hints;
    struct addrinfo* list = NULL;
    char service[6];
    char digits[5];
    size_t n = 0;
    size_t i;
    uint16_t v = port;
    int32_t result;

    do {
        digits[n++] = (char)('0' + v % 10U);
        v = (uint16_t)(v / 10U);
    } while (v != 0U);
    for (i = 0; i < n; ++i)
        service[i] = digits[n - 1U - i];
    service[n] = '\0';

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    if (lwip_getaddrinfo(host, service, &hints, &list) != 0 || list == NULL) {
        return RESPLOCK_PORT_NO_HOST;
    }
    result = left_ms(deadline) == 0U
                 ? RESPLOCK_PORT_TIMEOUT
                 : connect_address(list->ai_addr, list->ai_addrlen, deadline, out);
    lwip_freeaddrinfo(list);
    return result;
}
#endif

static int32_t lwip_port_connect(void* ctx, const char* host, uint16_t port, uint32_t timeout_ms) {
    resplock_lwip_t* self = (resplock_lwip_t*)ctx;
    const uint32_t deadline = (uint32_t)sys_now() + timeout_ms;
    int sock = -1;
    int32_t result = RESPLOCK_PORT_NO_HOST;

    close_socket(self); /* the library never connects twice, but a stale socket must not leak */
    if (host == NULL || host[0] == '\0') return RESPLOCK_PORT_NO_HOST;
    if (!connect_numeric(host, port, deadline, &sock, &result)) {
#if LWIP_DNS
        result = connect_by_name(host, port, deadline, &sock);
#else
        result = RESPLOCK_PORT_NO_HOST; /* no resolver in this lwIP build */
#endif
    }
    if (result == RESPLOCK_PORT_OK) self->sock = sock;
    return result;
}

static int32_t lwip_port_send(void* ctx, const uint8_t* data, size_t len, uint32_t timeout_ms) {
    resplock_lwip_t* self = (resplock_lwip_t*)ctx;
    const uint32_t deadline = (uint32_t)sys_now() + timeout_ms;
    if (self->sock < 0) return RESPLOCK_PORT_ERROR;
    if (len == 0U) return 0;
    if (len > 0x7fffffffU) len = 0x7fffffffU;

    for (;;) {
        const ssize_t n = lwip_send(self->sock, data, len, MSG_DONTWAIT);
        enum wait_result w = WAIT_FAILED;
        if (n > 0) return (int32_t)n;
        if (n < 0) {
            const int32_t failure = socket_failure(self->sock);
            if (failure != 0) return failure;
        }
        if (left_ms(deadline) == 0U) return 0;
        w = wait_for(self->sock, (short)POLLOUT, deadline);
        if (w == WAIT_TIMEOUT) return 0;
        if (w == WAIT_FAILED) return RESPLOCK_PORT_ERROR;
    }
}

static int32_t lwip_port_recv(void* ctx, uint8_t* buf, size_t len, uint32_t timeout_ms) {
    resplock_lwip_t* self = (resplock_lwip_t*)ctx;
    const uint32_t deadline = (uint32_t)sys_now() + timeout_ms;
    if (self->sock < 0) return RESPLOCK_PORT_ERROR;
    if (len == 0U) return 0;
    if (len > 0x7fffffffU) len = 0x7fffffffU;

    for (;;) {
        const ssize_t n = lwip_recv(self->sock, buf, len, MSG_DONTWAIT);
        enum wait_result w = WAIT_FAILED;
        if (n > 0) return (int32_t)n;
        if (n == 0) return RESPLOCK_PORT_CLOSED; /* orderly shutdown by the peer */
        {
            const int32_t failure = socket_failure(self->sock);
            if (failure != 0) return failure;
        }
        if (left_ms(deadline) == 0U) return 0;
        w = wait_for(self->sock, (short)POLLIN, deadline);
        if (w == WAIT_TIMEOUT) return 0;
        if (w == WAIT_FAILED) return RESPLOCK_PORT_ERROR;
    }
}

static void lwip_port_close(void* ctx) {
    close_socket((resplock_lwip_t*)ctx);
}

static uint32_t lwip_port_now_ms(void* ctx) {
    (void)ctx;
    return (uint32_t)sys_now();
}

static void lwip_port_sleep_ms(void* ctx, uint32_t ms) {
    const resplock_lwip_t* self = (const resplock_lwip_t*)ctx;
    if (self->config.sleep != NULL) {
        self->config.sleep(self->config.sleep_user, ms);
    } else if (ms > 0U) {
        sys_msleep(ms);
    }
}

static int32_t lwip_port_random(void* ctx, uint8_t* buf, size_t len) {
    const resplock_lwip_t* self = (const resplock_lwip_t*)ctx;
    if (self->config.random == NULL) return -1;
    return self->config.random(self->config.random_user, buf, len);
}

resplock_status_t resplock_lwip_port_init(resplock_lwip_t* ctx,
                                          const resplock_lwip_config_t* config,
                                          resplock_port_t* port) {
    if (ctx == NULL || port == NULL) return RESPLOCK_STATUS_invalid_argument;
    const int usable = config != NULL && config->random != NULL;
    ctx->sock = -1;
    if (config != NULL) {
        ctx->config = *config;
    } else {
        memset(&ctx->config, 0, sizeof ctx->config);
    }
    port->ctx = ctx;
    port->connect = lwip_port_connect;
    port->send = lwip_port_send;
    port->recv = lwip_port_recv;
    port->close = lwip_port_close;
    port->now_ms = lwip_port_now_ms;
    port->sleep_ms = lwip_port_sleep_ms;
    port->random = usable ? lwip_port_random : NULL;
    return usable ? RESPLOCK_STATUS_ok : RESPLOCK_STATUS_random_failed;
}
