/* Start-up code of the board firmware (QEMU mps2-an386, Cortex-M4): the vector table with a
 * SysTick handler (the firmware's millisecond clock), .data copy, .bss clear, semihosting set-up,
 * static constructors, then main. Any fault ends the run through semihosting with a failure
 * status, so a crash fails the test at once instead of hanging it. Only SysTick is enabled: the
 * Ethernet controller is polled. */
#include <stdint.h>
#include <stdlib.h>

#include "board.h"

/* From the linker script (tests/target/cortex-m4/mps2-an386.ld). */
extern uint32_t __data_load__;
extern uint32_t __data_start__;
extern uint32_t __data_end__;
extern uint32_t __bss_start__;
extern uint32_t __bss_end__;
extern uint32_t __stack_top__;

/* From newlib (librdimon, libc). */
extern void initialise_monitor_handles(void);
extern void __libc_init_array(void);

extern int main(int argc, char** argv);

void reset_handler(void);
void fault_handler(void);
void _init(void);
void _fini(void);

typedef void (*handler_t)(void);

struct vector_table {
    void* initial_sp;
    handler_t handlers[15];
};

__attribute__((section(".vectors"), used)) const struct vector_table vector_table = {
    .initial_sp = &__stack_top__,
    .handlers =
        {
            reset_handler,   /* Reset */
            fault_handler,   /* NMI */
            fault_handler,   /* HardFault */
            fault_handler,   /* MemManage */
            fault_handler,   /* BusFault */
            fault_handler,   /* UsageFault */
            0,               /* reserved */
            0,               /* reserved */
            0,               /* reserved */
            0,               /* reserved */
            fault_handler,   /* SVCall */
            fault_handler,   /* DebugMonitor */
            0,               /* reserved */
            fault_handler,   /* PendSV */
            systick_handler, /* SysTick */
        },
};

/* No library call here: the fault may have left newlib in any state. */
void fault_handler(void) {
    static const char message[] = "\n*** Cortex-M4 fault: firmware stopped ***\n";
    semihosting_call(SEMIHOSTING_SYS_WRITE0, (uintptr_t)message);
    semihosting_call(SEMIHOSTING_SYS_EXIT, SEMIHOSTING_ADP_RUN_TIME_ERROR);
    for (;;) {
    }
}

/* What crti.o/crtbegin.o would provide (the C run-time start files are left out). */
void _init(void) {}
void _fini(void) {}
void* __dso_handle = &__dso_handle;

void reset_handler(void) {
    uint32_t* dst = &__data_start__;
    const uint32_t* src = &__data_load__;
    while (dst < &__data_end__) {
        *dst++ = *src++;
    }
    for (dst = &__bss_start__; dst < &__bss_end__; ++dst) {
        *dst = 0;
    }
    initialise_monitor_handles();
    __libc_init_array();
    static char program[] = "firmware";
    char* argv[] = {program, 0};
    exit(main(1, argv));
}
