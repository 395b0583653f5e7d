/* mbedTLS port: a TLS session driven through mbedTLS's BIO callbacks over an inner port.
 * Every operation carries a deadline on the inner port's clock; the BIO callbacks give the inner
 * port only what is left of it, and report "nothing yet" as WANT_READ/WANT_WRITE, so mbedTLS
 * keeps partial records and the wrapper decides whether time remains to go on. */
#include "resplock/ports/mbedtls.h"

#include <limits.h>
#include <string.h>

#include "mbedtls/asn1.h"
#include "mbedtls/error.h"
#include "mbedtls/net_sockets.h"
#include "mbedtls/version.h"

/* The version is checked by resplock/ports/mbedtls.h: 2.28, or 3.2 to 3.6. */
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
#define RESPLOCK_MBEDTLS_3 1
#else
#define RESPLOCK_MBEDTLS_3 0
#endif
/* Before 3.5, mbedTLS neither keeps iPAddress entries of subjectAltName nor matches them: this
 * port does, from the raw extensions (v3_ext, a public field in 2.x and 3.x). */
#if MBEDTLS_VERSION_NUMBER < 0x03050000
#define RESPLOCK_MBEDTLS_OWN_IP_MATCH 1
#else
#define RESPLOCK_MBEDTLS_OWN_IP_MATCH 0
#endif
/* TLS 1.3 and MBEDTLS_USE_PSA_CRYPTO run their crypto through PSA, which must be initialised. */
#if RESPLOCK_MBEDTLS_3 && defined(MBEDTLS_PSA_CRYPTO_C) && \
    (defined(MBEDTLS_SSL_PROTO_TLS1_3) || defined(MBEDTLS_USE_PSA_CRYPTO))
#define RESPLOCK_MBEDTLS_PSA 1
#include "psa/crypto.h"
#else
#define RESPLOCK_MBEDTLS_PSA 0
#endif

static const unsigned char drbg_personalisation[] = "resplock tls";

/* ---------------------------------------------------------------------------------------------
 * Time */

static uint32_t time_left(const resplock_mbedtls_t* ctx) {
    const uint32_t now = ctx->inner.now_ms(ctx->inner.ctx);
    const uint32_t diff = ctx->deadline_ms - now;
    /* The wrap-safe reading of a 32-bit clock: a "negative" difference means the time is up. */
    return diff > (uint32_t)INT32_MAX ? 0U : diff;
}

static void start_clock(resplock_mbedtls_t* ctx, uint32_t timeout_ms) {
    ctx->deadline_ms = ctx->inner.now_ms(ctx->inner.ctx) + timeout_ms;
    ctx->inner_result = RESPLOCK_PORT_OK;
}

/* ---------------------------------------------------------------------------------------------
 * BIO callbacks: the inner port under mbedTLS */

static int bio_send(void* p, const unsigned char* buf, size_t len) {
    resplock_mbedtls_t* ctx = (resplock_mbedtls_t*)p;
    const uint32_t left = time_left(ctx);
    int32_t n = 0;
    if (left == 0) return MBEDTLS_ERR_SSL_WANT_WRITE;
    if (len > (size_t)INT32_MAX) len = (size_t)INT32_MAX;
    n = ctx->inner.send(ctx->inner.ctx, buf, len, left);
    if (n > 0) return (int)n;
    if (n == 0) return MBEDTLS_ERR_SSL_WANT_WRITE;
    ctx->inner_result = n;
    return MBEDTLS_ERR_NET_SEND_FAILED;
}

static int bio_recv_within(resplock_mbedtls_t* ctx, unsigned char* buf, size_t len,
                           uint32_t limit_ms) {
    uint32_t left = time_left(ctx);
    int32_t n = 0;
    if (limit_ms != 0 && limit_ms < left) left = limit_ms;
    if (left == 0) return MBEDTLS_ERR_SSL_WANT_READ;
    if (len > (size_t)INT32_MAX) len = (size_t)INT32_MAX;
    n = ctx->inner.recv(ctx->inner.ctx, buf, len, left);
    if (n > 0) return (int)n;
    if (n == 0) return MBEDTLS_ERR_SSL_WANT_READ;
    ctx->inner_result = n;
    return n == RESPLOCK_PORT_CLOSED ? 0 : MBEDTLS_ERR_NET_RECV_FAILED; /* 0: end of stream */
}

static int bio_recv(void* p, unsigned char* buf, size_t len) {
    return bio_recv_within((resplock_mbedtls_t*)p, buf, len, 0);
}

/* mbedTLS passes its configured read timeout (0: none); the operation's deadline bounds it. */
static int bio_recv_timeout(void* p, unsigned char* buf, size_t len, uint32_t timeout_ms) {
    return bio_recv_within((resplock_mbedtls_t*)p, buf, len, timeout_ms);
}

static int drbg_entropy(void* p, unsigned char* buf, size_t len) {
    const resplock_mbedtls_t* ctx = (const resplock_mbedtls_t*)p;
    return ctx->inner.random(ctx->inner.ctx, buf, len) == 0
               ? 0
               : MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
}

/* ---------------------------------------------------------------------------------------------
 * IP addresses as server names */

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Dotted-quad IPv4 ("192.0.2.1"), the whole string. */
static int parse_ipv4(const char* s, unsigned char out[4]) {
    int part = 0;
    for (part = 0; part < 4; ++part) {
        unsigned value = 0;
        int digits = 0;
        while (*s >= '0' && *s <= '9') {
            value = value * 10U + (unsigned)(*s - '0');
            if (++digits > 3 || value > 255U) return 0;
            ++s;
        }
        if (digits == 0) return 0;
        out[part] = (unsigned char)value;
        if (part < 3) {
            if (*s != '.') return 0;
            ++s;
        }
    }
    return *s == '\0';
}

/* IPv6 text form (RFC 4291 2.2): hex groups, at most one "::", optionally ending in IPv4. */
static int parse_ipv6(const char* s, unsigned char out[16]) {
    unsigned char bytes[16];
    size_t n = 0;
    int gap = -1; /* where "::" stands, in bytes */
    if (s[0] == ':') {
        if (s[1] != ':') return 0;
        gap = 0;
        s += 2;
    }
    while (*s != '\0') {
        const char* q = s;
        unsigned value = 0;
        int digits = 0;
        while (*q != '\0' && *q != ':' && *q != '.')
            ++q;
        if (*q == '.') { /* the last 32 bits in dotted form */
            if (n + 4 > sizeof bytes || !parse_ipv4(s, bytes + n)) return 0;
            n += 4;
            break;
        }
        while (hex_digit(*s) >= 0) {
            value = value * 16U + (unsigned)hex_digit(*s);
            if (++digits > 4) return 0;
            ++s;
        }
        if (digits == 0 || n + 2 > sizeof bytes) return 0;
        bytes[n++] = (unsigned char)(value >> 8);
        bytes[n++] = (unsigned char)(value & 0xffU);
        if (*s == '\0') break;
        if (*s != ':') return 0;
        ++s;
        if (*s == ':') {
            if (gap >= 0) return 0;
            gap = (int)n;
            ++s;
        } else if (*s == '\0') {
            return 0; /* a single trailing ':' */
        }
    }
    if (gap < 0) {
        if (n != sizeof bytes) return 0;
        memcpy(out, bytes, sizeof bytes);
        return 1;
    }
    if (n > sizeof bytes - 2) return 0; /* "::" stands for at least one group */
    memset(out, 0, 16);
    memcpy(out, bytes, (size_t)gap);
    memcpy(out + 16 - (n - (size_t)gap), bytes + gap, n - (size_t)gap);
    return 1;
}

#if RESPLOCK_MBEDTLS_OWN_IP_MATCH
/* iPAddress entries of subjectAltName, read from the raw extensions. The CN is never consulted
 * for an address (RFC 6125). */
static int cert_names_ip(const mbedtls_x509_crt* crt, const unsigned char* ip, size_t ip_len) {
    static const unsigned char san_oid[] = {0x55, 0x1d, 0x11}; /* id-ce-subjectAltName */
    const mbedtls_x509_buf* ext = &crt->v3_ext;
    unsigned char* p = ext->p;
    const unsigned char* end = NULL;
    size_t len = 0;
    if (p == NULL || ext->len == 0) return 0;
    end = p + ext->len;
    /* Step over the [3] EXPLICIT wrapper if the buffer starts with it. */
    if (*p == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_ASN1_CONSTRUCTED | 3)) {
        if (mbedtls_asn1_get_tag(&p, end, &len, *p) != 0) return 0;
        end = p + len;
    }
    if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE) != 0)
        return 0;
    end = p + len;
    while (p < end) {
        const unsigned char* ext_end = NULL;
        const unsigned char* names_end = NULL;
        int is_san = 0;
        if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE) !=
            0)
            return 0;
        ext_end = p + len;
        if (mbedtls_asn1_get_tag(&p, ext_end, &len, MBEDTLS_ASN1_OID) != 0) return 0;
        is_san = len == sizeof san_oid && memcmp(p, san_oid, sizeof san_oid) == 0;
        p += len;
        if (!is_san) {
            p = (unsigned char*)ext_end;
            continue;
        }
        if (p < ext_end && *p == MBEDTLS_ASN1_BOOLEAN) { /* critical */
            if (mbedtls_asn1_get_tag(&p, ext_end, &len, MBEDTLS_ASN1_BOOLEAN) != 0) return 0;
            p += len;
        }
        if (mbedtls_asn1_get_tag(&p, ext_end, &len, MBEDTLS_ASN1_OCTET_STRING) != 0) return 0;
        if (mbedtls_asn1_get_tag(&p, ext_end, &len,
                                 MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE) != 0)
            return 0;
        names_end = p + len;
        while (p < names_end) {
            const unsigned char tag = *p++;
            if (mbedtls_asn1_get_len(&p, names_end, &len) != 0) return 0;
            if (tag == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7) && len == ip_len &&
                memcmp(p, ip, ip_len) == 0)
                return 1;
            p += len;
        }
        return 0; /* an extension appears at most once */
    }
    return 0;
}

/* Called by mbedTLS for each certificate of the chain; the server's own is depth 0. */
static int verify_ip_name(void* p, mbedtls_x509_crt* crt, int depth, uint32_t* flags) {
    const resplock_mbedtls_t* ctx = (const resplock_mbedtls_t*)p;
    if (depth == 0 && ctx->verify_ip_len != 0 &&
        !cert_names_ip(crt, ctx->verify_ip, ctx->verify_ip_len)) {
        *flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
    }
    return 0;
}
#endif

/* ---------------------------------------------------------------------------------------------
 * Failures */

static void record_failure(resplock_mbedtls_t* ctx, resplock_mbedtls_failure_t kind, int err) {
    ctx->failure = kind;
    ctx->last_error = err;
}

/* Maps an mbedTLS error that ended an operation to a port result. */
static int32_t fail(resplock_mbedtls_t* ctx, int err, resplock_mbedtls_failure_t kind) {
    if (ctx->inner_result != RESPLOCK_PORT_OK) return ctx->inner_result;
    if (err == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || err == MBEDTLS_ERR_SSL_CONN_EOF) {
        return RESPLOCK_PORT_CLOSED;
    }
    if (err == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
        record_failure(ctx, RESPLOCK_MBEDTLS_FAILURE_verify, err);
        ctx->verify_flags = mbedtls_ssl_get_verify_result(&ctx->ssl);
    } else {
        record_failure(ctx, kind, err);
    }
    return RESPLOCK_PORT_ERROR;
}

/* True for the results that only mean "call again": no data yet, or a record that carried
 * none (e.g. a TLS 1.3 session ticket with mbedTLS 3.x). */
static int retry(int err) {
    if (err == MBEDTLS_ERR_SSL_WANT_READ || err == MBEDTLS_ERR_SSL_WANT_WRITE ||
        err == MBEDTLS_ERR_SSL_TIMEOUT)
        return 1;
#ifdef MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET
    if (err == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) return 1;
#endif
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Port functions */

static void tls_close(void* p) {
    resplock_mbedtls_t* ctx = (resplock_mbedtls_t*)p;
    ctx->connected = 0;
    ctx->inner.close(ctx->inner.ctx);
}

/* Sets the name to verify for this connection. */
static int32_t set_name(resplock_mbedtls_t* ctx, const char* host) {
    const char* name = ctx->server_name[0] != '\0' ? ctx->server_name : host;
    const int is_ip = parse_ipv4(name, ctx->verify_ip)   ? 4
                      : parse_ipv6(name, ctx->verify_ip) ? 16
                                                         : 0;
    int r = 0;
    ctx->verify_ip_len = (size_t)is_ip;
#if !RESPLOCK_MBEDTLS_OWN_IP_MATCH
    r = mbedtls_ssl_set_hostname(&ctx->ssl, name); /* 3.5+ matches iPAddress entries itself */
#else
    /* An address is not sent as SNI (RFC 6066) and is checked by verify_ip_name instead. */
    r = mbedtls_ssl_set_hostname(&ctx->ssl, is_ip ? NULL : name);
#endif
    if (r != 0) {
        record_failure(ctx, RESPLOCK_MBEDTLS_FAILURE_setup, r);
        return RESPLOCK_PORT_ERROR;
    }
    return RESPLOCK_PORT_OK;
}

static int32_t tls_connect(void* p, const char* host, uint16_t port, uint32_t timeout_ms) {
    resplock_mbedtls_t* ctx = (resplock_mbedtls_t*)p;
    int32_t r = 0;
    int err = 0;
    if (ctx->connected) tls_close(ctx);
    ctx->failure = RESPLOCK_MBEDTLS_FAILURE_none;
    ctx->last_error = 0;
    ctx->verify_flags = 0;
    if (!ctx->initialised) return RESPLOCK_PORT_ERROR;
    if (host == NULL || host[0] == '\0') return RESPLOCK_PORT_NO_HOST;
    start_clock(ctx, timeout_ms);

    err = mbedtls_ssl_session_reset(&ctx->ssl);
    if (err != 0) {
        record_failure(ctx, RESPLOCK_MBEDTLS_FAILURE_setup, err);
        return RESPLOCK_PORT_ERROR;
    }
    r = set_name(ctx, host);
    if (r != RESPLOCK_PORT_OK) return r;

    r = ctx->inner.connect(ctx->inner.ctx, host, port, timeout_ms);
    if (r != RESPLOCK_PORT_OK) return r;
    for (;;) {
        err = mbedtls_ssl_handshake(&ctx->ssl);
        if (err == 0) break;
        if (retry(err) && ctx->inner_result == RESPLOCK_PORT_OK) {
            if (time_left(ctx) > 0) continue;
            r = RESPLOCK_PORT_TIMEOUT;
        } else {
            r = fail(ctx, err, RESPLOCK_MBEDTLS_FAILURE_handshake);
            /* A transport failure keeps its own code, but it did end a handshake: say so. */
            if (ctx->failure == RESPLOCK_MBEDTLS_FAILURE_none) {
                record_failure(ctx, RESPLOCK_MBEDTLS_FAILURE_handshake,
                               r == RESPLOCK_PORT_CLOSED ? MBEDTLS_ERR_SSL_CONN_EOF : err);
            }
        }
        ctx->inner.close(ctx->inner.ctx);
        return r;
    }
    ctx->connected = 1;
    return RESPLOCK_PORT_OK;
}

static int32_t tls_send(void* p, const uint8_t* data, size_t len, uint32_t timeout_ms) {
    resplock_mbedtls_t* ctx = (resplock_mbedtls_t*)p;
    if (!ctx->connected) return RESPLOCK_PORT_ERROR;
    if (len == 0) return 0;
    if (len > (size_t)INT32_MAX) len = (size_t)INT32_MAX;
    start_clock(ctx, timeout_ms);
    for (;;) {
        /* After WANT_WRITE mbedTLS holds the pending record and expects the same data again,
         * which is what the caller does after a 0. */
        const int n = mbedtls_ssl_write(&ctx->ssl, data, len);
        if (n > 0) return (int32_t)n;
        if (retry(n) && ctx->inner_result == RESPLOCK_PORT_OK) {
            if (time_left(ctx) > 0) continue;
            return 0;
        }
        return fail(ctx, n, RESPLOCK_MBEDTLS_FAILURE_session);
    }
}

static int32_t tls_recv(void* p, uint8_t* buf, size_t len, uint32_t timeout_ms) {
    resplock_mbedtls_t* ctx = (resplock_mbedtls_t*)p;
    if (!ctx->connected) return RESPLOCK_PORT_ERROR;
    if (len == 0) return 0;
    if (len > (size_t)INT32_MAX) len = (size_t)INT32_MAX;
    start_clock(ctx, timeout_ms);
    for (;;) {
        const int n = mbedtls_ssl_read(&ctx->ssl, buf, len);
        if (n > 0) return (int32_t)n;
        if (n == 0) return RESPLOCK_PORT_CLOSED;
        if (retry(n) && ctx->inner_result == RESPLOCK_PORT_OK) {
            if (time_left(ctx) > 0) continue;
            return 0;
        }
        return fail(ctx, n, RESPLOCK_MBEDTLS_FAILURE_session);
    }
}

static uint32_t tls_now_ms(void* p) {
    const resplock_mbedtls_t* ctx = (const resplock_mbedtls_t*)p;
    return ctx->inner.now_ms(ctx->inner.ctx);
}

static void tls_sleep_ms(void* p, uint32_t ms) {
    const resplock_mbedtls_t* ctx = (const resplock_mbedtls_t*)p;
    ctx->inner.sleep_ms(ctx->inner.ctx, ms);
}

static int32_t tls_random(void* p, uint8_t* buf, size_t len) {
    const resplock_mbedtls_t* ctx = (const resplock_mbedtls_t*)p;
    return ctx->inner.random(ctx->inner.ctx, buf, len);
}

/* ---------------------------------------------------------------------------------------------
 * Set-up */

/* The length mbedTLS wants: 0 stands for a NUL-terminated PEM string. */
static size_t input_len(const unsigned char* data, size_t len) {
    return len != 0 ? len : strlen((const char*)data) + 1;
}

static void release(resplock_mbedtls_t* ctx) {
    mbedtls_ssl_free(&ctx->ssl);
    mbedtls_ssl_config_free(&ctx->conf);
    mbedtls_ctr_drbg_free(&ctx->drbg);
    mbedtls_x509_crt_free(&ctx->ca);
    mbedtls_x509_crt_free(&ctx->cert);
    mbedtls_pk_free(&ctx->key);
    ctx->initialised = 0;
    ctx->connected = 0;
}

static resplock_status_t refuse(resplock_mbedtls_t* ctx, resplock_status_t status,
                                resplock_mbedtls_failure_t kind, int err) {
    release(ctx);
    record_failure(ctx, kind, err);
    return status;
}

static int parse_key(resplock_mbedtls_t* ctx, const resplock_mbedtls_config_t* config) {
    const unsigned char* pwd = (const unsigned char*)config->key_password;
    const size_t pwd_len = pwd != NULL ? strlen(config->key_password) : 0;
    const size_t key_len = input_len(config->key, config->key_len);
    int err = 0;
#if RESPLOCK_MBEDTLS_3
    err = mbedtls_pk_parse_key(&ctx->key, config->key, key_len, pwd, pwd_len,
                               mbedtls_ctr_drbg_random, &ctx->drbg);
    if (err == 0) {
        err = mbedtls_pk_check_pair(&ctx->cert.pk, &ctx->key, mbedtls_ctr_drbg_random, &ctx->drbg);
    }
#else
    err = mbedtls_pk_parse_key(&ctx->key, config->key, key_len, pwd, pwd_len);
    if (err == 0) err = mbedtls_pk_check_pair(&ctx->cert.pk, &ctx->key);
#endif
    return err;
}

/* The port whose functions use ctx. */
static void fill_port(resplock_mbedtls_t* ctx, resplock_port_t* port) {
    port->ctx = ctx;
    port->connect = tls_connect;
    port->send = tls_send;
    port->recv = tls_recv;
    port->close = tls_close;
    port->now_ms = tls_now_ms;
    port->sleep_ms = tls_sleep_ms;
    port->random = ctx->inner.random != NULL ? tls_random : NULL;
}

resplock_status_t resplock_mbedtls_port_init(resplock_mbedtls_t* ctx,
                                             const resplock_mbedtls_config_t* config,
                                             resplock_port_t* out) {
    int err = 0;
    const resplock_port_t* inner = config != NULL ? config->inner : NULL;
    if (ctx == NULL || out == NULL) return RESPLOCK_STATUS_invalid_argument;
    memset(ctx, 0, sizeof *ctx);
    mbedtls_ssl_init(&ctx->ssl);
    mbedtls_ssl_config_init(&ctx->conf);
    mbedtls_ctr_drbg_init(&ctx->drbg);
    mbedtls_x509_crt_init(&ctx->ca);
    mbedtls_x509_crt_init(&ctx->cert);
    mbedtls_pk_init(&ctx->key);
    if (inner == NULL || config == NULL || inner->connect == NULL || inner->send == NULL ||
        inner->recv == NULL || inner->close == NULL || inner->now_ms == NULL ||
        inner->sleep_ms == NULL) {
        return refuse(ctx, RESPLOCK_STATUS_invalid_argument, RESPLOCK_MBEDTLS_FAILURE_none, 0);
    }
    ctx->inner = *inner;
    /* From here on *out is a port: one whose connect fails until init has succeeded, so that a
     * caller who ignores a failure never talks in the clear, nor crashes. */
    fill_port(ctx, out);
    ctx->insecure = config->insecure_skip_verify != 0;
    if (config->ca == NULL && !ctx->insecure) {
        return refuse(ctx, RESPLOCK_STATUS_invalid_argument, RESPLOCK_MBEDTLS_FAILURE_none, 0);
    }
    if ((config->cert == NULL) != (config->key == NULL)) {
        return refuse(ctx, RESPLOCK_STATUS_invalid_argument, RESPLOCK_MBEDTLS_FAILURE_none, 0);
    }
    if (config->server_name != NULL) {
        const size_t n = strlen(config->server_name);
        if (n > RESPLOCK_MBEDTLS_MAX_NAME) {
            return refuse(ctx, RESPLOCK_STATUS_invalid_argument, RESPLOCK_MBEDTLS_FAILURE_none, 0);
        }
        memcpy(ctx->server_name, config->server_name, n + 1);
    }
    /* The only entropy is the inner port's random source: a firmware port that has a hardware
     * RNG provides it there, and nothing here falls back to a clock. */
    if (inner->random == NULL) {
        return refuse(ctx, RESPLOCK_STATUS_random_failed, RESPLOCK_MBEDTLS_FAILURE_setup, 0);
    }
#if RESPLOCK_MBEDTLS_PSA
    if (psa_crypto_init() != PSA_SUCCESS) {
        return refuse(ctx, RESPLOCK_STATUS_random_failed, RESPLOCK_MBEDTLS_FAILURE_setup, 0);
    }
#endif
    err = mbedtls_ctr_drbg_seed(&ctx->drbg, drbg_entropy, ctx, drbg_personalisation,
                                sizeof drbg_personalisation - 1);
    if (err != 0) {
        return refuse(ctx, RESPLOCK_STATUS_random_failed, RESPLOCK_MBEDTLS_FAILURE_setup, err);
    }

    if (config->ca != NULL) {
        /* A bundle may hold certificates mbedTLS cannot use (a positive count of them): fine as
         * long as at least one parsed. */
        err = mbedtls_x509_crt_parse(&ctx->ca, config->ca, input_len(config->ca, config->ca_len));
        if (err < 0 || ctx->ca.version == 0) {
            return refuse(ctx, RESPLOCK_STATUS_invalid_argument, RESPLOCK_MBEDTLS_FAILURE_ca,
                          err < 0 ? err : MBEDTLS_ERR_X509_INVALID_FORMAT);
        }
    }
    if (config->cert != NULL) {
        err = mbedtls_x509_crt_parse(&ctx->cert, config->cert,
                                     input_len(config->cert, config->cert_len));
        if (err != 0) {
            return refuse(ctx, RESPLOCK_STATUS_invalid_argument, RESPLOCK_MBEDTLS_FAILURE_cert,
                          err < 0 ? err : MBEDTLS_ERR_X509_INVALID_FORMAT);
        }
        err = parse_key(ctx, config);
        if (err != 0) {
            return refuse(ctx, RESPLOCK_STATUS_invalid_argument, RESPLOCK_MBEDTLS_FAILURE_key, err);
        }
    }

    err = mbedtls_ssl_config_defaults(&ctx->conf, MBEDTLS_SSL_IS_CLIENT,
                                      MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
    if (err == 0) {
#if RESPLOCK_MBEDTLS_3
        mbedtls_ssl_conf_min_tls_version(&ctx->conf, MBEDTLS_SSL_VERSION_TLS1_2);
#else
        mbedtls_ssl_conf_min_version(&ctx->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
                                     MBEDTLS_SSL_MINOR_VERSION_3);
#endif
        mbedtls_ssl_conf_rng(&ctx->conf, mbedtls_ctr_drbg_random, &ctx->drbg);
        if (ctx->insecure) {
            mbedtls_ssl_conf_authmode(&ctx->conf, MBEDTLS_SSL_VERIFY_NONE);
        } else {
            mbedtls_ssl_conf_authmode(&ctx->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
            mbedtls_ssl_conf_ca_chain(&ctx->conf, &ctx->ca, NULL);
#if RESPLOCK_MBEDTLS_OWN_IP_MATCH
            mbedtls_ssl_conf_verify(&ctx->conf, verify_ip_name, ctx);
#endif
        }
        if (config->cert != NULL)
            err = mbedtls_ssl_conf_own_cert(&ctx->conf, &ctx->cert, &ctx->key);
    }
    if (err == 0) err = mbedtls_ssl_setup(&ctx->ssl, &ctx->conf);
    if (err != 0) return refuse(ctx, RESPLOCK_STATUS_io_error, RESPLOCK_MBEDTLS_FAILURE_setup, err);
    mbedtls_ssl_set_bio(&ctx->ssl, ctx, bio_send, bio_recv, bio_recv_timeout);
    ctx->initialised = 1;
    return RESPLOCK_STATUS_ok;
}

void resplock_mbedtls_free(resplock_mbedtls_t* ctx) {
    if (ctx == NULL) return;
    if (ctx->connected) tls_close(ctx);
    release(ctx);
}

/* ---------------------------------------------------------------------------------------------
 * Explaining failures */

resplock_mbedtls_failure_t resplock_mbedtls_failure(const resplock_mbedtls_t* ctx) {
    return ctx->failure;
}

int resplock_mbedtls_last_error(const resplock_mbedtls_t* ctx) {
    return ctx->last_error;
}

uint32_t resplock_mbedtls_verify_flags(const resplock_mbedtls_t* ctx) {
    return ctx->verify_flags;
}

/* Appends text to buf[*pos..cap-1], truncating, always NUL-terminated. Line ends in the text
 * become "; " so that the result stays one line. */
static void append(char* buf, size_t cap, size_t* pos, const char* text) {
    for (; *text != '\0' && *pos + 1 < cap; ++text) {
        if (*text == '\n') {
            if (text[1] == '\0') break;
            buf[(*pos)++] = ';';
            if (*pos + 1 < cap) buf[(*pos)++] = ' ';
        } else {
            buf[(*pos)++] = *text;
        }
    }
    buf[*pos] = '\0';
}

static void append_error(char* buf, size_t cap, size_t* pos, int err) {
    char text[160];
    text[0] = '\0';
#if defined(MBEDTLS_ERROR_C)
    mbedtls_strerror(err, text, sizeof text);
#endif
    /* cppcheck-suppress knownConditionTrueFalse ; always true only without MBEDTLS_ERROR_C */
    if (text[0] == '\0') {
        /* -0xHHHH without printf: error codes are negative 16-bit values. */
        static const char digits[] = "0123456789abcdef";
        const unsigned v = (unsigned)(err < 0 ? -err : err) & 0xffffU;
        text[0] = '-';
        text[1] = '0';
        text[2] = 'x';
        text[3] = digits[(v >> 12) & 0xfU];
        text[4] = digits[(v >> 8) & 0xfU];
        text[5] = digits[(v >> 4) & 0xfU];
        text[6] = digits[v & 0xfU];
        text[7] = '\0';
    }
    append(buf, cap, pos, text);
}

size_t resplock_mbedtls_describe(const resplock_mbedtls_t* ctx, char* buf, size_t cap) {
    size_t pos = 0;
    if (buf == NULL || cap == 0) return 0;
    buf[0] = '\0';
    switch (ctx->failure) {
        case RESPLOCK_MBEDTLS_FAILURE_none:
            return 0;
        case RESPLOCK_MBEDTLS_FAILURE_verify: {
            char reasons[512];
            int n = -1;
            reasons[0] = '\0';
#if !defined(MBEDTLS_X509_REMOVE_INFO)
            n = mbedtls_x509_crt_verify_info(reasons, sizeof reasons, "", ctx->verify_flags);
#endif
            append(buf, cap, &pos, "certificate verify failed: ");
            /* cppcheck-suppress knownConditionTrueFalse ; always false with X509_REMOVE_INFO */
            if (n > 0) {
                append(buf, cap, &pos, reasons);
            } else {
                append_error(buf, cap, &pos, ctx->last_error);
            }
            return pos;
        }
        case RESPLOCK_MBEDTLS_FAILURE_handshake:
            append(buf, cap, &pos, "TLS handshake failed: ");
            if (ctx->last_error == MBEDTLS_ERR_SSL_CONN_EOF) {
                append(buf, cap, &pos, "the server closed the connection");
                return pos;
            }
            break;
        case RESPLOCK_MBEDTLS_FAILURE_session:
            append(buf, cap, &pos, "TLS session failed: ");
            break;
        case RESPLOCK_MBEDTLS_FAILURE_setup:
            append(
                buf, cap, &pos,
                ctx->last_error == 0 ? "TLS setup failed: no random source" : "TLS setup failed: ");
            break;
        case RESPLOCK_MBEDTLS_FAILURE_ca:
            append(buf, cap, &pos, "cannot parse the CA certificate(s): ");
            break;
        case RESPLOCK_MBEDTLS_FAILURE_cert:
            append(buf, cap, &pos, "cannot parse the client certificate: ");
            break;
        case RESPLOCK_MBEDTLS_FAILURE_key:
            append(buf, cap, &pos, "cannot use the client key: ");
            break;
    }
    if (ctx->last_error != 0) append_error(buf, cap, &pos, ctx->last_error);
    return pos;
}
