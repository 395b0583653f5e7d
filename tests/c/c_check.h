/* Checks for the C programs of tests/c: each counts, prints the failed ones and carries on; the
 * program ends with `return c_check_summary();`. One copy per program (static). */
#ifndef RESPLOCK_TESTS_C_CHECK_H
#define RESPLOCK_TESTS_C_CHECK_H

#include <stdio.h>

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

#endif /* RESPLOCK_TESTS_C_CHECK_H */
