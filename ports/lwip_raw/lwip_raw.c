/* lwIP raw-API port: lwIP's callbacks record what happened in the context; the port's calls run
 * the application's poll hook until what they wait for is recorded or their deadline passes.
 * Deadlines are 32-bit wrapping milliseconds, like the library's own. */
#if !defined(_POSIX_C_SOURCE) && defined(__unix__)
/* A hosted build (e.g. against Debian's liblwip headers) in strict C99 hides POSIX from the C
 * library's headers; lwIP's arch.h then declares its own ssize_t, at odds with the system's. */
#define _POSIX_C_SOURCE 200112L
#endif

#include "resplock/ports/lwip_raw.h"

#include "lwip/opt.h"

#include "lwip/err.h"
#include "lwip/ip_addr.h"
#include "lwip/pbuf.h"
#include "lwip/sys.h"
#include "lwip/tcp.h"
#if LWIP_DNS
#include "lwip/dns.h"
#endif

#include <string.h>

#if !LWIP_TCP
#error "the resplock lwIP raw-API port needs TCP (LWIP_TCP=1)"
#endif
#if RESPLOCK_LWIP_RAW_RX_SIZE < 1 || RESPLOCK_LWIP_RAW_RX_SIZE > 0xffff
#error "RESPLOCK_LWIP_RAW_RX_SIZE must be 1..65535"
#endif

enum conn_state {
    STATE_IDLE,       /* no pcb */
    STATE_CONNECTING, /* tcp_connect() sent the SYN */
    STATE_CONNECTED,  /* established */
    STATE_FAILED      /* lwIP reported an error (and freed the pcb) */
};

enum dns_state { DNS_IDLE, DNS_WAITING, DNS_FOUND, DNS_FAILED };

static uint32_t now_ms(const resplock_lwip_raw_t* self) {
    if (self->config.now != NULL) return self->config.now(self->config.now_user);
    return (uint32_t)sys_now();
}

/* Milliseconds until deadline, 0 once it has passed. */
static uint32_t left_ms(const resplock_lwip_raw_t* self, uint32_t deadline) {
    const uint32_t left = deadline - now_ms(self);
    return left > 0x7fffffffU ? 0U : left;
}

static void drive(const resplock_lwip_raw_t* self) {
    self->config.poll(self->config.poll_user);
}

/* Takes bytes of p, from offset on, into the ring; returns how many. */
static uint16_t take(resplock_lwip_raw_t* self, const struct pbuf* p, uint16_t offset) {
    uint16_t taken = 0;
    while (self->rx_len < RESPLOCK_LWIP_RAW_RX_SIZE && offset < p->tot_len) {
        const uint32_t tail = ((uint32_t)self->rx_head + self->rx_len) % RESPLOCK_LWIP_RAW_RX_SIZE;
        uint32_t room = RESPLOCK_LWIP_RAW_RX_SIZE - (uint32_t)self->rx_len;
        const uint32_t to_end = RESPLOCK_LWIP_RAW_RX_SIZE - tail;
        const uint32_t rest = (uint32_t)p->tot_len - offset;
        uint16_t n = 0;
        if (room > to_end) room = to_end;
        n = (uint16_t)(rest < room ? rest : room);
        n = pbuf_copy_partial(p, &self->rx[tail], n, offset);
        if (n == 0U) break;
        self->rx_len = (uint16_t)(self->rx_len + n);
        offset = (uint16_t)(offset + n);
        taken = (uint16_t)(taken + n);
    }
    if (taken != 0U && self->pcb != NULL) tcp_recved(self->pcb, taken); /* reopen the window */
    return taken;
}

/* Moves what fits of the held pbuf into the ring, and frees it once all of it is there. */
static void take_held(resplock_lwip_raw_t* self) {
    if (self->held == NULL) return;
    self->held_offset = (uint16_t)(self->held_offset + take(self, self->held, self->held_offset));
    if (self->held_offset >= self->held->tot_len) {
        (void)pbuf_free(self->held);
        self->held = NULL;
        self->held_offset = 0;
    }
}

/* lwIP's recv callback. p NULL: the peer's FIN. Data that finds the port still holding an
 * earlier pbuf is refused (ERR_MEM without touching p): lwIP keeps it as the pcb's refused data,
 * acknowledges none of it, and offers it again later. Otherwise the port takes what fits into
 * the ring and holds the rest of this one pbuf until the application reads. */
static err_t on_recv(void* arg, struct tcp_pcb* pcb, struct pbuf* p, err_t err) {
    resplock_lwip_raw_t* self = (resplock_lwip_raw_t*)arg;
    uint16_t taken = 0;
    (void)pcb;
    if (self == NULL) {
        if (p != NULL) (void)pbuf_free(p);
        return ERR_OK;
    }
    if (p == NULL) {
        self->peer_closed = 1;
        return ERR_OK;
    }
    if (err != ERR_OK || self->held != NULL) return ERR_MEM;
    taken = take(self, p, 0);
    if (taken < p->tot_len) {
        self->held = p;
        self->held_offset = taken;
    } else {
        (void)pbuf_free(p);
    }
    return ERR_OK;
}

/* lwIP's error callback: the pcb is already freed. */
static void on_err(void* arg, err_t err) {
    resplock_lwip_raw_t* self = (resplock_lwip_raw_t*)arg;
    if (self == NULL) return;
    self->pcb = NULL;
    self->state = STATE_FAILED;
    self->error = (int8_t)err;
}

static err_t on_connected(void* arg, struct tcp_pcb* pcb, err_t err) {
    resplock_lwip_raw_t* self = (resplock_lwip_raw_t*)arg;
    (void)pcb;
    if (self != NULL && err == ERR_OK) self->state = STATE_CONNECTED;
    return ERR_OK;
}

/* Detaches the port from the pcb so that no callback reaches the context any more. */
static void detach(struct tcp_pcb* pcb) {
    tcp_arg(pcb, NULL);
    tcp_recv(pcb, NULL);
    tcp_err(pcb, NULL);
    tcp_sent(pcb, NULL);
}

static void reset_state(resplock_lwip_raw_t* self) {
    if (self->held != NULL) (void)pbuf_free(self->held);
    self->held = NULL;
    self->held_offset = 0;
    self->rx_head = 0;
    self->rx_len = 0;
    self->state = STATE_IDLE;
    self->error = ERR_OK;
    self->peer_closed = 0;
}

static void release(resplock_lwip_raw_t* self) {
    struct tcp_pcb* pcb = self->pcb;
    self->pcb = NULL;
    if (pcb != NULL) {
        detach(pcb);
        /* tcp_close() hands the pcb to lwIP (it is freed after the FIN exchange); when lwIP has
         * no memory for the FIN, the pcb is aborted (freed at once, RST sent) instead. */
        if (tcp_close(pcb) != ERR_OK) tcp_abort(pcb);
    }
    reset_state(self);
}

#if LWIP_DNS
/* Name lookups. lwIP cannot cancel one: once dns_gethostbyname() has returned ERR_INPROGRESS it
 * calls the callback exactly once, with the argument it was given, when the answer comes, the
 * server says no, or its last retry runs out (seconds after a connect's deadline may have passed).
 * So the argument is never the context, which may be closed, reused for another lookup or gone by
 * then, but a slot of this static table, held from dns_gethostbyname() until lwIP's callback for
 * it. The context waiting on a slot is named in it only while it waits; an answer for a lookup
 * given up on finds no one and is dropped. Each held slot is one request held in lwIP, so there
 * are as many slots as lwIP has requests (DNS_MAX_REQUESTS, defined as in lwIP's dns.c): this
 * table is full only when lwIP's is. It is used under lwIP's core lock, like the rest of the
 * port. */
#if (LWIP_DNS_SECURE & LWIP_DNS_SECURE_NO_MULTIPLE_OUTSTANDING) != 0 && defined(DNS_MAX_REQUESTS)
#define LOOKUP_SLOTS DNS_MAX_REQUESTS
#else
#define LOOKUP_SLOTS DNS_TABLE_SIZE
#endif

struct lookup {
    resplock_lwip_raw_t* waiter; /* the context waiting for the answer, NULL once it gave up */
    uint8_t held;                /* lwIP holds a request whose callback argument is this slot */
};

/* Static by design: lwIP's callback must find its slot after the context is gone. */
/* NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables) */
static struct lookup lookups[LOOKUP_SLOTS];

static void on_dns(const char* name, const ip_addr_t* addr, void* arg) {
    struct lookup* lookup = (struct lookup*)arg;
    resplock_lwip_raw_t* self = NULL;
    (void)name;
    self = lookup->waiter;
    lookup->waiter = NULL;
    lookup->held = 0;         /* lwIP calls back once per request: the slot is free again */
    if (self == NULL) return; /* a lookup given up on: the answer is for no one */
    if (addr != NULL) {
        ip_addr_copy(self->dns_addr, *addr);
        self->dns_state = DNS_FOUND;
    } else {
        self->dns_state = DNS_FAILED;
    }
}

static struct lookup* free_lookup(void) {
    size_t i = 0;
    for (i = 0; i < LOOKUP_SLOTS; ++i) {
        if (!lookups[i].held) return &lookups[i];
    }
    return NULL;
}
#endif

/* Resolves host (numeric, or a name with LWIP_DNS) before the deadline. */
static int32_t resolve(resplock_lwip_raw_t* self, const char* host, uint32_t deadline,
                       ip_addr_t* out) {
#if LWIP_DNS
    struct lookup* lookup = NULL;
    err_t err = ERR_OK;
#endif
    if (ipaddr_aton(host, out)) return RESPLOCK_PORT_OK;
#if LWIP_DNS
    lookup = free_lookup();
    if (lookup == NULL) return RESPLOCK_PORT_NO_HOST; /* lwIP holds as many requests as it can */
    lookup->held = 1;
    lookup->waiter = self;
    self->dns_state = DNS_WAITING;
    err = dns_gethostbyname(host, out, on_dns, lookup);
    if (err != ERR_INPROGRESS) {
        /* Answered from lwIP's cache or refused: lwIP holds no request and will not call back. */
        lookup->held = 0;
        lookup->waiter = NULL;
        self->dns_state = DNS_IDLE;
        return err == ERR_OK ? RESPLOCK_PORT_OK : RESPLOCK_PORT_NO_HOST;
    }
    for (;;) {
        drive(self);
        /* on_dns has freed the slot once dns_state is FOUND or FAILED. */
        if (self->dns_state == DNS_FOUND) {
            ip_addr_copy(*out, self->dns_addr);
            self->dns_state = DNS_IDLE;
            return RESPLOCK_PORT_OK;
        }
        if (self->dns_state == DNS_FAILED) {
            self->dns_state = DNS_IDLE;
            return RESPLOCK_PORT_NO_HOST;
        }
        if (left_ms(self, deadline) == 0U) {
            /* lwIP keeps the request (and the slot) until it calls back; no one waits for it. */
            lookup->waiter = NULL;
            self->dns_state = DNS_IDLE;
            return RESPLOCK_PORT_TIMEOUT;
        }
    }
#else
    (void)self;
    (void)deadline;
    return RESPLOCK_PORT_NO_HOST; /* no resolver in this lwIP build */
#endif
}

/* The outcome of a connect that lwIP ended with err. A reset answer to the SYN is the usual
 * refusal; a missing route is ERR_RTE. */
static int32_t connect_error(err_t err) {
    switch (err) {
        case ERR_RST:
        case ERR_RTE:
        case ERR_CLSD:
        case ERR_CONN:
            return RESPLOCK_PORT_REFUSED;
        case ERR_TIMEOUT:
            return RESPLOCK_PORT_TIMEOUT;
        default:
            return RESPLOCK_PORT_ERROR;
    }
}

static int32_t raw_connect(void* ctx, const char* host, uint16_t port, uint32_t timeout_ms) {
    resplock_lwip_raw_t* self = (resplock_lwip_raw_t*)ctx;
    const uint32_t deadline = now_ms(self) + timeout_ms;
    ip_addr_t addr;
    struct tcp_pcb* pcb = NULL;
    int32_t result = RESPLOCK_PORT_ERROR;
    err_t err = ERR_OK;

    release(self); /* the library never connects twice, but a stale pcb must not leak */
    if (host == NULL || host[0] == '\0') return RESPLOCK_PORT_NO_HOST;
    result = resolve(self, host, deadline, &addr);
    if (result != RESPLOCK_PORT_OK) return result;

    pcb = tcp_new_ip_type((u8_t)IP_GET_TYPE(&addr));
    if (pcb == NULL) return RESPLOCK_PORT_ERROR; /* no pcb left in lwIP's pool */
    /* Requests are small and each waits for its reply: Nagle's delay would only add latency. */
    tcp_nagle_disable(pcb);
    tcp_arg(pcb, self);
    tcp_recv(pcb, on_recv);
    tcp_err(pcb, on_err);
    self->pcb = pcb;
    self->state = STATE_CONNECTING;
    err = tcp_connect(pcb, &addr, port, on_connected);
    if (err != ERR_OK) {
        release(self);
        return connect_error(err);
    }
    for (;;) {
        drive(self);
        if (self->state == STATE_CONNECTED) return RESPLOCK_PORT_OK;
        if (self->state == STATE_FAILED) {
            result = connect_error((err_t)self->error);
            release(self);
            return result;
        }
        if (left_ms(self, deadline) == 0U) {
            release(self); /* still SYN_SENT: tcp_close() frees it at once */
            return RESPLOCK_PORT_TIMEOUT;
        }
    }
}

/* What a send or recv on a connection lwIP ended reports: a reset by the peer is a close. */
static int32_t ended(const resplock_lwip_raw_t* self) {
    return self->error == ERR_RST || self->error == ERR_CLSD ? RESPLOCK_PORT_CLOSED
                                                             : RESPLOCK_PORT_ERROR;
}

static int32_t raw_send(void* ctx, const uint8_t* data, size_t len, uint32_t timeout_ms) {
    resplock_lwip_raw_t* self = (resplock_lwip_raw_t*)ctx;
    const uint32_t deadline = now_ms(self) + timeout_ms;
    if (len == 0U) return 0;
    for (;;) {
        if (self->state == STATE_FAILED) return ended(self);
        if (self->pcb == NULL || self->state != STATE_CONNECTED) return RESPLOCK_PORT_ERROR;
        if (self->peer_closed && self->rx_len == 0U && self->held == NULL) {
            return RESPLOCK_PORT_CLOSED;
        }
        {
            size_t n = tcp_sndbuf(self->pcb);
            if (n > len) n = len;
            if (n > 0xffffU) n = 0xffffU;
            if (n > 0U && tcp_sndqueuelen(self->pcb) < TCP_SND_QUEUELEN) {
                const err_t err = tcp_write(self->pcb, data, (u16_t)n, TCP_WRITE_FLAG_COPY);
                if (err == ERR_OK) {
                    (void)tcp_output(self->pcb); /* a failed output is retried by lwIP's timer */
                    return (int32_t)n;
                }
                if (err != ERR_MEM) return RESPLOCK_PORT_ERROR;
            }
        }
        /* No room: wait for acknowledgements to free some. */
        if (left_ms(self, deadline) == 0U) return 0;
        drive(self);
    }
}

/* Copies up to len bytes out of the ring. */
static int32_t give(resplock_lwip_raw_t* self, uint8_t* buf, size_t len) {
    size_t n = 0;
    while (n < len && self->rx_len > 0U) {
        buf[n++] = self->rx[self->rx_head];
        self->rx_head = (uint16_t)((self->rx_head + 1U) % RESPLOCK_LWIP_RAW_RX_SIZE);
        self->rx_len = (uint16_t)(self->rx_len - 1U);
    }
    if (self->rx_len == 0U) self->rx_head = 0;
    take_held(self); /* room again for what was held back */
    return (int32_t)n;
}

static int32_t raw_recv(void* ctx, uint8_t* buf, size_t len, uint32_t timeout_ms) {
    resplock_lwip_raw_t* self = (resplock_lwip_raw_t*)ctx;
    const uint32_t deadline = now_ms(self) + timeout_ms;
    if (len == 0U) return 0;
    if (len > 0x7fffffffU) len = 0x7fffffffU;
    if (self->state == STATE_IDLE || self->state == STATE_CONNECTING) return RESPLOCK_PORT_ERROR;
    for (;;) {
        /* Bytes that arrived before a close or a reset are still delivered first. */
        if (self->rx_len > 0U) return give(self, buf, len);
        if (self->state == STATE_FAILED) return ended(self);
        if (self->peer_closed) return RESPLOCK_PORT_CLOSED;
        /* One round even with timeout 0: it may bring what already arrived. */
        drive(self);
        if (self->rx_len > 0U || self->state == STATE_FAILED || self->peer_closed) continue;
        if (left_ms(self, deadline) == 0U) return 0;
    }
}

static void raw_close(void* ctx) {
    release((resplock_lwip_raw_t*)ctx);
}

static uint32_t raw_now_ms(void* ctx) {
    return now_ms((const resplock_lwip_raw_t*)ctx);
}

/* Sleeping keeps the stack running: timers fire and frames are answered meanwhile. */
static void raw_sleep_ms(void* ctx, uint32_t ms) {
    const resplock_lwip_raw_t* self = (const resplock_lwip_raw_t*)ctx;
    const uint32_t deadline = now_ms(self) + ms;
    while (left_ms(self, deadline) > 0U) {
        drive(self);
    }
}

static int32_t raw_random(void* ctx, uint8_t* buf, size_t len) {
    const resplock_lwip_raw_t* self = (const resplock_lwip_raw_t*)ctx;
    if (self->config.random == NULL) return -1;
    return self->config.random(self->config.random_user, buf, len);
}

resplock_status_t resplock_lwip_raw_port_init(resplock_lwip_raw_t* ctx,
                                              const resplock_lwip_raw_config_t* config,
                                              resplock_port_t* out) {
    if (ctx == NULL || out == NULL || config == NULL || config->poll == NULL) {
        return RESPLOCK_STATUS_invalid_argument;
    }
    memset(ctx, 0, sizeof *ctx);
    ctx->config = *config;
    ctx->pcb = NULL;
    ctx->held = NULL;
    reset_state(ctx);
    ctx->dns_state = DNS_IDLE;
    out->ctx = ctx;
    out->connect = raw_connect;
    out->send = raw_send;
    out->recv = raw_recv;
    out->close = raw_close;
    out->now_ms = raw_now_ms;
    out->sleep_ms = raw_sleep_ms;
    out->random = config->random != NULL ? raw_random : NULL;
    return config->random != NULL ? RESPLOCK_STATUS_ok : RESPLOCK_STATUS_random_failed;
}
