/* Mock port for C programs: the same scripted transport and fake clock as mock.hpp,
 * through C functions over one shared instance (C has no constructors; tests use one mock at a
 * time). Byte strings given to expect/reply are not copied: they must outlive the script. */
#ifndef RESPLOCK_MOCK_H
#define RESPLOCK_MOCK_H

#include <stddef.h>
#include <stdint.h>

#include "resplock/core/port.h"
#include "resplock/core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct resplock_mock resplock_mock_t;

typedef struct resplock_mock_config {
    uint32_t now_ms; /* the fake clock's reading to start from */
} resplock_mock_config_t;

/* The shared mock, emptied: no steps, counters 0, clock just below the 32-bit wrap, random bytes
 * counting up from 0. Invalidates ports taken from it before. */
resplock_mock_t* resplock_mock_reset(void);

/* Fills *out with functions that act on mock; config (NULL: the clock stays where it is) sets
 * the fake clock. Returns ok, or invalid_argument when mock or out is NULL. */
resplock_status_t resplock_mock_port_init(resplock_mock_t* mock,
                                          const resplock_mock_config_t* config,
                                          resplock_port_t* out);

/* Script steps, consumed in order (see MockPort in mock.hpp). */
void resplock_mock_on_connect(resplock_mock_t* mock, int32_t result);
void resplock_mock_expect(resplock_mock_t* mock, const char* bytes, size_t len);
void resplock_mock_reply(resplock_mock_t* mock, const char* bytes, size_t len);
void resplock_mock_recv_timeout(resplock_mock_t* mock);
void resplock_mock_recv_closed(resplock_mock_t* mock);

/* 1 when every step was consumed and nothing unexpected happened, else 0. */
int resplock_mock_done(const resplock_mock_t* mock);
/* The first unexpected call, or NULL. */
const char* resplock_mock_mismatch(const resplock_mock_t* mock);
/* The fake clock, and a way to move it forward. */
uint32_t resplock_mock_now(const resplock_mock_t* mock);
void resplock_mock_advance(resplock_mock_t* mock, uint32_t ms);
/* Make the random source fail (1) or work (0). */
void resplock_mock_random_fails(resplock_mock_t* mock, int fails);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_MOCK_H */
