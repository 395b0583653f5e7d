/* resplock compile-time limits. Override any of them with -D or by defining RESPLOCK_CONFIG_FILE
 * as the name of a header of your own that defines them. Every value here bounds RAM or work.
 * The C API's storage sizes (RESPLOCK_*_STORAGE in resplock/c_api/) follow these limits: compile
 * the library and every C file that includes those headers with the same values. */
#ifndef RESPLOCK_CONFIG_H
#define RESPLOCK_CONFIG_H

#ifdef RESPLOCK_CONFIG_FILE
#include RESPLOCK_CONFIG_FILE
#endif

/* Deepest array nesting the parser accepts; deeper replies are rejected as too large. */
#ifndef RESPLOCK_MAX_DEPTH
#define RESPLOCK_MAX_DEPTH 8
#endif

/* Most elements one array reply may declare; a larger declared count is rejected before use. */
#ifndef RESPLOCK_MAX_ARRAY_ELEMENTS
#define RESPLOCK_MAX_ARRAY_ELEMENTS 16
#endif

/* Largest bulk string length accepted (the connection buffer bounds it further). */
#ifndef RESPLOCK_MAX_BULK_LEN
#define RESPLOCK_MAX_BULK_LEN 65536
#endif

/* Parsed values a connection keeps for one reply (each array counts itself plus its elements). */
#ifndef RESPLOCK_MAX_REPLY_VALUES
#define RESPLOCK_MAX_REPLY_VALUES 8
#endif

/* Longest lock key in bytes; a longer key is refused, never truncated. */
#ifndef RESPLOCK_MAX_KEY_LEN
#define RESPLOCK_MAX_KEY_LEN 128
#endif

/* Random bytes in a lock token (hex-encoded, so the token is twice as long). 16..20. */
#ifndef RESPLOCK_TOKEN_BYTES
#define RESPLOCK_TOKEN_BYTES 16
#endif

/* Longest owner label a token may carry (LABEL:random, see AcquireOptions::owner). It sizes the
 * token buffer of every lock (max_token_len = label + 1 + 40); 0: no labels, 40-byte tokens. */
#ifndef RESPLOCK_MAX_OWNER_LEN
#define RESPLOCK_MAX_OWNER_LEN 32
#endif

/* First and largest pause between acquisition attempts while waiting for a busy lock. */
#ifndef RESPLOCK_RETRY_MIN_MS
#define RESPLOCK_RETRY_MIN_MS 10
#endif
#ifndef RESPLOCK_RETRY_MAX_MS
#define RESPLOCK_RETRY_MAX_MS 250
#endif

/* Most servers a quorum (Redlock) lock spans. */
#ifndef RESPLOCK_MAX_SERVERS
#define RESPLOCK_MAX_SERVERS 5
#endif

/* Longest host name or address a router keeps for the node it talks to (a Cluster redirection's
 * target, a master named by Sentinel); a longer one is refused as an error. */
#ifndef RESPLOCK_MAX_HOST_LEN
#define RESPLOCK_MAX_HOST_LEN 64
#endif

/* Most redirections (Cluster MOVED / ASK, Sentinel re-resolution) one command follows. */
#ifndef RESPLOCK_MAX_REDIRECTS
#define RESPLOCK_MAX_REDIRECTS 5
#endif

/* Most sentinels a Sentinel router asks for the master. */
#ifndef RESPLOCK_MAX_SENTINELS
#define RESPLOCK_MAX_SENTINELS 5
#endif

/* Most locks one renewal driver (Renewer) keeps alive. */
#ifndef RESPLOCK_MAX_RENEWED
#define RESPLOCK_MAX_RENEWED 4
#endif

#if RESPLOCK_MAX_HOST_LEN < 15 || RESPLOCK_MAX_HOST_LEN > 255
#error "RESPLOCK_MAX_HOST_LEN must be 15..255 (an IPv4 address fits 15)"
#endif
#if RESPLOCK_MAX_REDIRECTS < 1 || RESPLOCK_MAX_REDIRECTS > 16
#error "RESPLOCK_MAX_REDIRECTS must be 1..16"
#endif
#if RESPLOCK_MAX_SENTINELS < 1 || RESPLOCK_MAX_SENTINELS > 15
#error "RESPLOCK_MAX_SENTINELS must be 1..15"
#endif
#if RESPLOCK_TOKEN_BYTES < 16 || RESPLOCK_TOKEN_BYTES > 20
#error "RESPLOCK_TOKEN_BYTES must be 16..20 (128..160 bits, at most 40 characters)"
#endif
#if RESPLOCK_MAX_OWNER_LEN < 0 || RESPLOCK_MAX_OWNER_LEN > 64
#error "RESPLOCK_MAX_OWNER_LEN must be 0..64"
#endif
#if RESPLOCK_MAX_DEPTH < 1 || RESPLOCK_MAX_DEPTH > 32
#error "RESPLOCK_MAX_DEPTH must be 1..32"
#endif
#if RESPLOCK_MAX_SERVERS < 1 || RESPLOCK_MAX_SERVERS > 15
#error "RESPLOCK_MAX_SERVERS must be 1..15"
#endif
#if RESPLOCK_MAX_RENEWED < 1
#error "RESPLOCK_MAX_RENEWED must be at least 1"
#endif
#if RESPLOCK_MAX_REPLY_VALUES < 1
#error "RESPLOCK_MAX_REPLY_VALUES must be at least 1"
#endif

#endif /* RESPLOCK_CONFIG_H */
