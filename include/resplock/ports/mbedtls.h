/* mbedTLS port: TLS over any other port's transport (POSIX sockets, lwIP, ...).
 *
 * The TLS layer reaches the network only through the inner port's send/recv, takes its clock,
 * sleep and random source from it, and itself presents a resplock_port_t, so a Connection uses
 * it like any other port:
 *
 *     resplock_posix_t tcp;
 *     resplock_port_t inner, port;
 *     resplock_posix_port_init(&tcp, NULL, &inner);
 *     static resplock_mbedtls_t tls;            (large: keep it out of small stacks)
 *     resplock_mbedtls_config_t cfg = {0};
 *     cfg.inner = &inner;
 *     cfg.ca = ca_pem;                          (NUL-terminated PEM: ca_len may stay 0)
 *     if (resplock_mbedtls_port_init(&tls, &cfg, &port) != RESPLOCK_STATUS_ok) ...
 *
 * Verification is always on: the server's certificate must chain to one of the CA certificates
 * given, and must name the server (config.server_name, else the host passed to connect; an IP
 * address is matched against the certificate's iPAddress entries only). The one way around it is
 * the explicit insecure_skip_verify flag.
 *
 * Memory: this port allocates nothing itself; the state is caller-owned. mbedTLS, however,
 * allocates through its own allocator (mbedtls_calloc): the parsed certificates and key at init,
 * and the record buffers (about 2 x 16.7 KB with the default MBEDTLS_SSL_IN/OUT_CONTENT_LEN) when
 * the TLS context is set up. On firmware, build mbedTLS with MBEDTLS_MEMORY_BUFFER_ALLOC_C and
 * call mbedtls_memory_buffer_alloc_init() with a fixed arena to keep all of it in one static
 * buffer; the record buffers shrink with MBEDTLS_SSL_IN/OUT_CONTENT_LEN if the server accepts
 * the max_fragment_length extension.
 *
 * mbedTLS versions: 2.28 (tested end to end) and 3.2 to 3.6 (compile-time adaptations, not
 * tested here); any other version is refused at compile time below. With 3.x the key parser and
 * the version call take their 3.x forms; IP addresses are matched by mbedTLS itself from 3.5 on
 * and by this port before; when TLS 1.3 or MBEDTLS_USE_PSA_CRYPTO is built in, init calls
 * psa_crypto_init(), whose generator is seeded by the platform's entropy (not by the inner port)
 * unless MBEDTLS_PSA_CRYPTO_EXTERNAL_RNG is set. */
#ifndef RESPLOCK_MBEDTLS_H
#define RESPLOCK_MBEDTLS_H

#include <stddef.h>
#include <stdint.h>

/* First, so that an unsupported mbedTLS stops here with a clear message (in 3.x and later it
 * includes mbedtls/build_info.h, which defines the version). */
#include "mbedtls/version.h"

/* 3.0 and 3.1 lack mbedtls_ssl_conf_min_tls_version(); 4.x has no mbedtls_ssl_conf_rng() and no
 * public CTR_DRBG. */
#if !defined(MBEDTLS_VERSION_NUMBER) ||                                                \
    !((MBEDTLS_VERSION_NUMBER >= 0x021C0000 && MBEDTLS_VERSION_NUMBER < 0x03000000) || \
      (MBEDTLS_VERSION_NUMBER >= 0x03020000 && MBEDTLS_VERSION_NUMBER < 0x03070000))
#error "the resplock mbedTLS port supports mbedTLS 2.28 and 3.2 to 3.6 only"
#endif

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/pk.h"
#include "mbedtls/ssl.h"
#include "mbedtls/x509_crt.h"
#include "resplock/core/port.h"
#include "resplock/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest server name (a DNS name has at most 253 characters). */
#define RESPLOCK_MBEDTLS_MAX_NAME 255

/* Certificates and keys are PEM or DER buffers. mbedTLS reads PEM only when the NUL that ends
 * it is counted in the length (len = strlen + 1); a length of 0 means exactly that: the buffer
 * is a NUL-terminated PEM string. The buffers are parsed (copied) by init and may be freed
 * afterwards. */
typedef struct resplock_mbedtls_config {
    /* The transport TLS runs over (copied); its context must outlive the TLS port. Required. */
    const resplock_port_t* inner;
    /* Trusted CA certificate(s) for the server's certificate; several PEM blocks may follow one
     * another. Required unless insecure_skip_verify is set. */
    const unsigned char* ca;
    size_t ca_len;
    /* Client certificate and its private key, for servers that require mutual TLS
     * (redis: tls-auth-clients yes). Both or neither. */
    const unsigned char* cert;
    size_t cert_len;
    const unsigned char* key;
    size_t key_len;
    const char* key_password; /* NULL: the key is not encrypted */
    /* Name the server's certificate must carry, also sent as SNI (a DNS name; an IP address is
     * matched but not sent). NULL or "": the host passed to connect. */
    const char* server_name;
    /* DANGEROUS. Non-zero: do not verify the server's certificate at all, so anyone on the
     * network path can impersonate the server and read the lock traffic (and any password).
     * Only for a first test against a server whose CA is not at hand. */
    int insecure_skip_verify;
} resplock_mbedtls_config_t;

/* What the last TLS-level failure was, to explain an io_error/closed status to a person. */
typedef enum resplock_mbedtls_failure {
    RESPLOCK_MBEDTLS_FAILURE_none = 0,  /* no TLS failure (a transport one, if anything) */
    RESPLOCK_MBEDTLS_FAILURE_verify,    /* the server's certificate was refused (verify_flags) */
    RESPLOCK_MBEDTLS_FAILURE_handshake, /* the handshake failed otherwise (alert, not TLS, ...) */
    RESPLOCK_MBEDTLS_FAILURE_session,   /* a record failed after the handshake (alert, MAC) */
    RESPLOCK_MBEDTLS_FAILURE_setup,     /* init: DRBG or TLS context setup failed */
    RESPLOCK_MBEDTLS_FAILURE_ca,        /* init: the CA certificate(s) could not be parsed */
    RESPLOCK_MBEDTLS_FAILURE_cert,      /* init: the client certificate could not be parsed */
    RESPLOCK_MBEDTLS_FAILURE_key        /* init: the key could not be parsed or does not match */
} resplock_mbedtls_failure_t;

/* Caller-owned state. Fields are private. It holds pointers into itself once initialised: do
 * not move or copy it; it must outlive every use of the port. */
typedef struct resplock_mbedtls {
    resplock_port_t inner;
    mbedtls_ssl_context ssl;
    mbedtls_ssl_config conf;
    mbedtls_ctr_drbg_context drbg;
    mbedtls_x509_crt ca;
    mbedtls_x509_crt cert;
    mbedtls_pk_context key;
    char server_name[RESPLOCK_MBEDTLS_MAX_NAME + 1]; /* "": the host given to connect */
    unsigned char verify_ip[16]; /* the name to verify, when it is an IP address */
    size_t verify_ip_len;        /* 4 or 16 then, else 0 */
    int insecure;
    int initialised;
    int connected;         /* inner connection open and handshake done */
    uint32_t deadline_ms;  /* of the operation in progress, on inner.now_ms */
    int32_t inner_result;  /* a failure the inner port reported to the BIO, else OK */
    int last_error;        /* mbedTLS error code of the last TLS failure, 0 if none */
    uint32_t verify_flags; /* MBEDTLS_X509_BADCERT_* of the last verification failure */
    resplock_mbedtls_failure_t failure;
} resplock_mbedtls_t;

/* Parses the configuration, seeds the DRBG from config->inner->random (the only entropy used),
 * sets up the TLS context and fills *out with functions that use ctx. On failure everything is
 * released again (resplock_mbedtls_free is harmless but not needed); *out is untouched when an
 * argument or the inner port is NULL, and is otherwise a port whose connect fails
 * (RESPLOCK_PORT_ERROR), so that a caller who ignores the status never talks in the clear.
 * Returns:
 *   ok;
 *   invalid_argument: a NULL argument or inner port, no CA without insecure_skip_verify, a
 *     certificate or key that does not parse (resplock_mbedtls_failure says which), cert without
 *     key or the reverse, a key that does not match the certificate, a server_name that is too
 *     long;
 *   random_failed: inner->random is NULL or failed while seeding;
 *   io_error: mbedTLS could not set up its context (e.g. out of memory).
 * The port's connect opens the inner connection and completes the handshake within the one
 * timeout: RESPLOCK_PORT_OK, the inner port's failure (TIMEOUT, NO_HOST, REFUSED, CLOSED, ERROR),
 * TIMEOUT when the handshake does not finish in time, or ERROR for a TLS failure
 * (resplock_mbedtls_failure says which). send/recv follow port.h. close drops the connection
 * without a close_notify: it must never block, and a forked child closing its copy must not end
 * the parent's session. now_ms, sleep_ms and random are the inner port's. */
resplock_status_t resplock_mbedtls_port_init(resplock_mbedtls_t* ctx,
                                             const resplock_mbedtls_config_t* config,
                                             resplock_port_t* out);

/* Closes any connection and releases what mbedTLS allocated. ctx may be initialised again. */
void resplock_mbedtls_free(resplock_mbedtls_t* ctx);

/* The last TLS failure (reset by each connect), its mbedTLS error code and, for a verification
 * failure, the MBEDTLS_X509_BADCERT_* flags. */
resplock_mbedtls_failure_t resplock_mbedtls_failure(const resplock_mbedtls_t* ctx);
int resplock_mbedtls_last_error(const resplock_mbedtls_t* ctx);
uint32_t resplock_mbedtls_verify_flags(const resplock_mbedtls_t* ctx);

/* Writes a one-line explanation of the last TLS failure into buf (always NUL-terminated when
 * cap > 0), e.g. "certificate verify failed: The certificate is not correctly signed by the
 * trusted CA". Returns the length written, 0 when there is no TLS failure to explain. */
size_t resplock_mbedtls_describe(const resplock_mbedtls_t* ctx, char* buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_MBEDTLS_H */
