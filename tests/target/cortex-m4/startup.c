/* Start-up code for the Cortex-M programs on QEMU's MPS2 boards (the unit tests, the consumer
 * firmware of tests/package, the board firmware of tests/board): vector table, .data copy, .bss
 * clear, semihosting set-up, static constructors, then main. A fault ends the run through
 * semihosting with a failure status, so a crashing program fails at once instead of hanging. A
 * program that enables SysTick defines systick_handler(); no other interrupt is enabled.
 * The same code serves the Cortex-M4 (mps2-an386.ld), the Cortex-M0+ build run on the an386's M4,
 * and the Cortex-M33 (mps2-an505.ld, secure state). Built with -DSTARTUP_STRICT_TRAPS (the
 * Cortex-M0+ programs), it turns on the core's unaligned-access and divide-by-zero traps first, so
 * that an access an ARMv6-M part would fault on also faults on the M4 that runs the program. */
#include <stdint.h>
#include <stdlib.h>

/* From mps2-an386.ld. */
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

/* SysTick is a fault unless the program defines its own handler (the board's millisecond clock). */
__attribute__((weak)) void systick_handler(void);
void systick_handler(void) {
    fault_handler();
}

/* Only the 16 system exceptions. */
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
            fault_handler,   /* SecureFault (ARMv8-M; reserved before) */
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

enum {
    SEMIHOSTING_SYS_WRITE0 = 0x04,
    SEMIHOSTING_SYS_EXIT = 0x18,
    ADP_STOPPED_RUN_TIME_ERROR = 0x20023
};

static void semihosting_call(uint32_t op, uintptr_t arg) {
    register uint32_t r0 __asm__("r0") = op;
    register uintptr_t r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
}

/* No library call here: the fault may have left newlib in any state. */
void fault_handler(void) {
    static const char message[] = "\n*** Cortex-M fault: program stopped ***\n";
    semihosting_call(SEMIHOSTING_SYS_WRITE0, (uintptr_t)message);
    /* On AArch32 SYS_EXIT takes the reason itself; anything but ApplicationExit exits QEMU with 1.
     */
    semihosting_call(SEMIHOSTING_SYS_EXIT, ADP_STOPPED_RUN_TIME_ERROR);
    for (;;) {
    }
}

/* What crti.o/crtbegin.o would provide (they are left out with the rest of the C run-time start
 * files): __libc_init_array and exit call _init/_fini, the constructors themselves run from
 * .init_array; __cxa_atexit keys static destructors on __dso_handle. */
void _init(void) {}
void _fini(void) {}
void* __dso_handle = &__dso_handle;

#if defined(STARTUP_STRICT_TRAPS)
/* SCB->CCR: UNALIGN_TRP (bit 3) faults on any unaligned load or store, DIV_0_TRP (bit 4) on an
 * integer division by zero. */
static void enable_strict_traps(void) {
    volatile uint32_t* const ccr = (volatile uint32_t*)0xE000ED14u;
    *ccr |= (1u << 3) | (1u << 4);
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}
#endif

void reset_handler(void) {
#if defined(STARTUP_STRICT_TRAPS)
    enable_strict_traps();
#endif
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
    static char program[] = "test";
    char* argv[] = {program, 0};
    exit(main(1, argv));
}
