/* Stand-in for FreeRTOS's task.h (see FreeRTOS.h here): the task handle and vTaskDelete(), with
 * the kernel's signatures. */
#ifndef RESPLOCK_TESTS_FREERTOS_TASK_H
#define RESPLOCK_TESTS_FREERTOS_TASK_H

struct tskTaskControlBlock;
typedef struct tskTaskControlBlock* TaskHandle_t;

void vTaskDelete(TaskHandle_t xTaskToDelete);

#endif /* RESPLOCK_TESTS_FREERTOS_TASK_H */
