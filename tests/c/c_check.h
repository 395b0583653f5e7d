/* Checks for the C programs of tests/c: each counts, prints the failed ones and carries on; the
 * program ends with `return c_check_summary();`. One copy per program (static). */
#ifndef RESPLOCK_TESTS_C_CHECK_H
#define RESPLOCK_TESTS_C_CHECK_H

#include <stdio.h>

#include "resplock/c_api/lock.h"
#include "resplock/core/status.h"

static int failures;
static int checks;

#define CHECK(cond)                                                           \
    do {                                                                      \
        ++checks;                                                             \
        if (!(cond)) {                                                        \
            ++failures;                                                       \
            printf("  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                     \
    } while (0)

#define CHECK_STATUS(expr, want)                                                    \
    do {                                                                            \
        resplock_status_t got_ = (expr);                                            \
        ++checks;                                                                   \
        if (got_ != (want)) {                                                       \
            ++failures;                                                             \
            printf("  %s:%d: %s gave %s, expected %s\n", __FILE__, __LINE__, #expr, \
                   resplock_status_str(got_), resplock_status_str(want));           \
        }                                                                           \
    } while (0)

/* An I/O buffer of n bytes at config.h's default limits, plus what longer keys and tokens add to
 * the longest requests (up to five keys and two tokens, the fair lock's) in a build with raised
 * limits (scripts/build-matrix.sh). */
#define C_OVER(limit, default_value) ((limit) > (default_value) ? (limit) - (default_value) : 0)
#define C_BUF(n) \
    ((n) + 6 * C_OVER(RESPLOCK_MAX_KEY_LEN, 128) + 3 * C_OVER(RESPLOCK_MAX_TOKEN_LEN, 73))

#endif /* RESPLOCK_TESTS_C_CHECK_H */
