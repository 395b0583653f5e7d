/* mbedTLS 2.28 configuration of the board's TLS firmware (MBEDTLS_CONFIG_FILE): a TLS 1.2
 * client with ECDHE-ECDSA on P-256 and AES-GCM (what the test certificates, made with
 * prime256v1 keys, and redis-server's OpenSSL agree on), X.509 DER parsing and verification,
 * CTR_DRBG seeded by the resplock port from its inner port's random source, and every allocation
 * of mbedTLS in one static arena (MEMORY_BUFFER_ALLOC_C): no heap.
 * No MBEDTLS_HAVE_TIME_DATE: the board has no real-time clock, so certificate validity dates are
 * not checked. A real device that has one (or gets the time securely) should enable it. */
#ifndef RESPLOCK_TESTS_BOARD_MBEDTLS_CONFIG_H
#define RESPLOCK_TESTS_BOARD_MBEDTLS_CONFIG_H

/* Platform: no OS entropy, allocations from the static arena. */
#define MBEDTLS_PLATFORM_C
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_MEMORY_BUFFER_ALLOC_C
#define MBEDTLS_NO_PLATFORM_ENTROPY

/* Cryptography. */
#define MBEDTLS_AES_C
#define MBEDTLS_AES_ROM_TABLES
#define MBEDTLS_GCM_C
#define MBEDTLS_CIPHER_C
#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_CTR_DRBG_C

/* Certificates. */
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_OID_C
#define MBEDTLS_PK_C
#define MBEDTLS_PK_PARSE_C
#define MBEDTLS_X509_USE_C
#define MBEDTLS_X509_CRT_PARSE_C

/* TLS 1.2 client. */
#define MBEDTLS_SSL_TLS_C
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
#define MBEDTLS_SSL_SERVER_NAME_INDICATION
#define MBEDTLS_SSL_EXTENDED_MASTER_SECRET
#define MBEDTLS_SSL_KEEP_PEER_CERTIFICATE
#define MBEDTLS_SSL_MAX_FRAGMENT_LENGTH
/* The server may send full 16 KB records; requests are small. */
#define MBEDTLS_SSL_IN_CONTENT_LEN 16384
#define MBEDTLS_SSL_OUT_CONTENT_LEN 2048

/* Texts for failures (resplock_mbedtls_describe). */
#define MBEDTLS_ERROR_C

#include "mbedtls/check_config.h"

#endif /* RESPLOCK_TESTS_BOARD_MBEDTLS_CONFIG_H */
