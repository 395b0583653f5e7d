/* Transport adapter port: the application's recv/send pair (coreMQTT's TransportInterface_t
 * shape) under the port contract. Every call is bounded by a deadline on the application's clock;
 * the transport's own waits are bounded either through its timeout hooks (set to the time left
 * before each call) or by the wait it declares, in which case the adapter calls it only while that
 * much time is left. The deadline arithmetic is done on 32-bit wrapping milliseconds, like the
 * library's own. */
#include "resplock/ports/transport.h"

#include <string.h>

/* Milliseconds until deadline, 0 once it has passed. */
static uint32_t left_ms(const resplock_transport_t* self, uint32_t deadline) {
    const uint32_t left = deadline - self->config.now_ms(self->config.user);
    return left > 0x7fffffffU ? 0U : left;
}

/* A transport result in port terms; n must never exceed what was asked for. */
static int32_t port_result(const resplock_transport_t* self, int32_t n, size_t len) {
    if (n > 0) return (size_t)n <= len ? n : RESPLOCK_PORT_ERROR;
    if (n == 0) return 0;
    return self->config.closed != 0 && n == self->config.closed ? RESPLOCK_PORT_CLOSED
                                                                : RESPLOCK_PORT_ERROR;
}

/* recv into in, or send out (the other NULL), until some bytes move, the transport fails or the
 * deadline passes (0). */
static int32_t transfer(resplock_transport_t* self, void* in, const void* out, size_t len,
                        uint32_t timeout_ms) {
    const resplock_transport_config_t* c = &self->config;
    const int sending = out != NULL;
    const resplock_transport_timeout_fn set_timeout =
        sending ? c->set_send_timeout : c->set_recv_timeout;
    const uint32_t own_wait = sending ? c->send_wait_ms : c->recv_wait_ms;
    const uint32_t deadline = c->now_ms(c->user) + timeout_ms;
    if (!self->connected) return RESPLOCK_PORT_ERROR;
    if (len == 0U) return 0;
    if (len > 0x7fffffffU) len = 0x7fffffffU;

    for (;;) {
        uint32_t left = left_ms(self, deadline);
        int32_t n = 0;
        if (set_timeout != NULL) {
            if (set_timeout(c->network, left) != 0) return RESPLOCK_PORT_ERROR;
        } else if (own_wait > left) {
            /* One call could outlast the time left (and the probe, timeout 0, must not wait at
             * all): let the time pass without it. */
            if (left > 0U) c->sleep_ms(c->user, left);
            return 0;
        }
        n = sending ? c->send(c->network, out, len) : c->recv(c->network, in, len);
        n = port_result(self, n, len);
        if (n != 0) return n;
        left = left_ms(self, deadline);
        if (left == 0U) return 0;
        /* Back early with nothing (a transport that never waits, or a wake-up before its
         * timeout): do not spin. */
        c->sleep_ms(c->user, left < RESPLOCK_TRANSPORT_POLL_MS ? left : RESPLOCK_TRANSPORT_POLL_MS);
    }
}

static void transport_close(void* ctx) {
    resplock_transport_t* self = (resplock_transport_t*)ctx;
    if (self->connected) {
        self->connected = 0;
        self->config.disconnect(self->config.network);
    }
}

static int32_t transport_connect(void* ctx, const char* host, uint16_t port, uint32_t timeout_ms) {
    resplock_transport_t* self = (resplock_transport_t*)ctx;
    int32_t r = 0;
    transport_close(self); /* the library never connects twice, but a stale one must not leak */
    if (host == NULL || host[0] == '\0') return RESPLOCK_PORT_NO_HOST;
    r = self->config.connect(self->config.network, host, port, timeout_ms);
    switch (r) {
        case RESPLOCK_PORT_OK:
            self->connected = 1;
            return r;
        case RESPLOCK_PORT_TIMEOUT:
        case RESPLOCK_PORT_NO_HOST:
        case RESPLOCK_PORT_REFUSED:
            return r;
        default:
            return RESPLOCK_PORT_ERROR;
    }
}

static int32_t transport_send(void* ctx, const uint8_t* data, size_t len, uint32_t timeout_ms) {
    if (data == NULL) return RESPLOCK_PORT_ERROR;
    return transfer((resplock_transport_t*)ctx, NULL, data, len, timeout_ms);
}

static int32_t transport_recv(void* ctx, uint8_t* buf, size_t len, uint32_t timeout_ms) {
    return transfer((resplock_transport_t*)ctx, buf, NULL, len, timeout_ms);
}

static uint32_t transport_now_ms(void* ctx) {
    const resplock_transport_t* self = (const resplock_transport_t*)ctx;
    return self->config.now_ms(self->config.user);
}

static void transport_sleep_ms(void* ctx, uint32_t ms) {
    const resplock_transport_t* self = (const resplock_transport_t*)ctx;
    self->config.sleep_ms(self->config.user, ms);
}

static int32_t transport_random(void* ctx, uint8_t* buf, size_t len) {
    const resplock_transport_t* self = (const resplock_transport_t*)ctx;
    return self->config.random(self->config.user, buf, len);
}

resplock_status_t resplock_transport_port_init(resplock_transport_t* ctx,
                                               const resplock_transport_config_t* config,
                                               resplock_port_t* out) {
    if (ctx == NULL || config == NULL || out == NULL || config->network == NULL ||
        config->recv == NULL || config->send == NULL || config->connect == NULL ||
        config->disconnect == NULL || config->now_ms == NULL || config->sleep_ms == NULL ||
        config->closed > 0) {
        return RESPLOCK_STATUS_invalid_argument;
    }
    ctx->config = *config;
    ctx->connected = 0;
    out->ctx = ctx;
    out->connect = transport_connect;
    out->send = transport_send;
    out->recv = transport_recv;
    out->close = transport_close;
    out->now_ms = transport_now_ms;
    out->sleep_ms = transport_sleep_ms;
    out->random = config->random != NULL ? transport_random : NULL;
    return config->random != NULL ? RESPLOCK_STATUS_ok : RESPLOCK_STATUS_random_failed;
}
