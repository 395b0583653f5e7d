/* Stand-in for FreeRTOS.h, so that examples/rtos_lwip_task.c compiles on the host without a
 * FreeRTOS kernel: only what the example uses. Never linked. */
#ifndef RESPLOCK_TESTS_FREERTOS_H
#define RESPLOCK_TESTS_FREERTOS_H

#include <stdint.h>

#endif /* RESPLOCK_TESTS_FREERTOS_H */
