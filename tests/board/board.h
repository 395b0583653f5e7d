/* The board support of the firmware on QEMU's mps2-an386 (Cortex-M4): semihosting, the SysTick
 * millisecond clock, the polled LAN9118 Ethernet netif, and the per-run test random source. */
#ifndef RESPLOCK_TESTS_BOARD_H
#define RESPLOCK_TESTS_BOARD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    SEMIHOSTING_SYS_OPEN = 0x01,
    SEMIHOSTING_SYS_CLOSE = 0x02,
    SEMIHOSTING_SYS_WRITE0 = 0x04,
    SEMIHOSTING_SYS_READ = 0x06,
    SEMIHOSTING_SYS_FLEN = 0x0c,
    SEMIHOSTING_SYS_GET_CMDLINE = 0x15,
    SEMIHOSTING_SYS_EXIT = 0x18,
    SEMIHOSTING_ADP_RUN_TIME_ERROR = 0x20023
};

/* One semihosting call (BKPT 0xAB): op in r0, arg in r1; returns r0. */
static inline uintptr_t semihosting_call(uint32_t op, uintptr_t arg) {
    register uintptr_t r0 __asm__("r0") = op;
    register uintptr_t r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

/* SysTick: 1 ms ticks from the 25 MHz processor clock. */
void systick_handler(void);
void board_clock_start(void);
uint32_t board_now_ms(void);

/* The command line given to QEMU with -semihosting-config ...,arg=...; "" if none. */
const char* board_cmdline(void);

/* Reads a whole host file (semihosting) into buf; returns its length, or -1 if it cannot be
 * read or is larger than cap. */
long board_read_file(const char* path, uint8_t* buf, size_t cap);

/* Brings up lwIP (NO_SYS=1) on the LAN9118 with the static address 10.0.2.15/24, gateway
 * 10.0.2.2 (QEMU's user network). Returns 0, or -1 if the controller does not answer. */
int board_net_init(void);
/* One round of the super-loop's network work: frames received by the controller go to lwIP,
 * then lwIP's timers run. Never blocks. */
void board_net_poll(void);
/* The same, then sleeps until the next interrupt (WFI: at the latest the next millisecond tick),
 * so that a waiting firmware does not spin (nor keep the emulator's host CPU busy). */
void board_net_poll_idle(void);

/* TEST-ONLY random source: NOT cryptographically secure. The board has no TRNG, so each run is
 * seeded by the host (through the semihosting command line) and the seed is expanded with
 * splitmix64. Lock tokens made from it are guessable by anyone who knows the seed; a real board
 * must use its TRNG, or a DRBG (e.g. mbedTLS's CTR_DRBG) seeded from one. */
void board_test_random_seed(uint64_t seed);
int32_t board_test_random(void* user, uint8_t* buf, size_t len);
uint32_t board_test_random32(void);

#ifdef __cplusplus
}
#endif

#endif /* RESPLOCK_TESTS_BOARD_H */
