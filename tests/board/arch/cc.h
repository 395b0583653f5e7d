/* lwIP's architecture header for the board firmware (arm-none-eabi, newlib-nano; diagnostics
 * through semihosting) and for the raw-API port's host test (tests/lwip/raw): lwIP's default
 * integer types from <stdint.h>, diagnostics through printf, abort on an assertion. */
#ifndef RESPLOCK_TESTS_BOARD_ARCH_CC_H
#define RESPLOCK_TESTS_BOARD_ARCH_CC_H

#include <stdio.h>
#include <stdlib.h>

#define LWIP_PLATFORM_DIAG(x) \
    do {                      \
        printf x;             \
    } while (0)
#define LWIP_PLATFORM_ASSERT(x)                                                   \
    do {                                                                          \
        printf("lwIP assertion \"%s\" failed at %s:%d\n", x, __FILE__, __LINE__); \
        abort();                                                                  \
    } while (0)

#endif /* RESPLOCK_TESTS_BOARD_ARCH_CC_H */
