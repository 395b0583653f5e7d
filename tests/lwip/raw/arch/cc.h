/* lwIP's architecture header for the raw-API port's host test: the host's C library, lwIP's
 * default integer types from <stdint.h>, diagnostics to stdout, abort on an assertion. */
#ifndef RESPLOCK_TEST_LWIP_RAW_ARCH_CC_H
#define RESPLOCK_TEST_LWIP_RAW_ARCH_CC_H

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

#endif /* RESPLOCK_TEST_LWIP_RAW_ARCH_CC_H */
