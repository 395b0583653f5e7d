/* The board support of the firmware on QEMU's mps2-an386 (Cortex-M4) and mps2-an505 (Cortex-M33,
 * secure state): semihosting, the SysTick millisecond clock, the polled LAN9118 Ethernet netif,
 * and the per-run test random source. */
#ifndef RESPLOCK_TESTS_BOARD_H
#define RESPLOCK_TESTS_BOARD_H

#include <stddef.h>
#include <stdint.h>

/* The board, chosen by board.mk's BOARD (-DBOARD_MPS2_AN386 or -DBOARD_MPS2_AN505): what differs
 * between the two as QEMU models them. Everything else is the same on both: the core's registers
 * (SysTick), semihosting, the LAN9118's own registers; the memory map is the linker script's. The
 * driver is polled, so neither board's Ethernet interrupt number is needed (an386: IRQ 13, an505:
 * IRQ 48, the expansion interrupt 16).
 *   BOARD_NAME          QEMU's machine (-M)
 *   BOARD_LAN9118_BASE  the Ethernet controller's registers
 *   BOARD_CPU_HZ        the processor clock, which SysTick counts */
#if defined(BOARD_MPS2_AN386)
/* hw/arm/mps2.c: the LAN9118 at 0x40200000, a 25 MHz clock. */
#define BOARD_NAME "mps2-an386"
#define BOARD_LAN9118_BASE 0x40200000u
#define BOARD_CPU_HZ 25000000u
#elif defined(BOARD_MPS2_AN505)
/* hw/arm/mps2-tz.c: the LAN9118 at 0x42000000 behind a peripheral protection controller (the AHB
 * expansion PPC 0), which resets with it secure-only. The firmware runs secure and uses the secure
 * alias, 0x52000000 (the IoTKit's IDAU: bit 28 set is the secure half). With the SAU as it resets
 * (off) every access of secure code is secure, so the non-secure address would reach it too; the
 * secure one stays right once an SAU marks the non-secure half as such. A 20 MHz clock. On this
 * board 0x40200000 is UART 0, not the LAN9118. */
#define BOARD_NAME "mps2-an505"
#define BOARD_LAN9118_BASE 0x52000000u
#define BOARD_CPU_HZ 20000000u
#else
#error "no board: build with -DBOARD_MPS2_AN386 or -DBOARD_MPS2_AN505 (board.mk's BOARD)"
#endif

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

/* SysTick: 1 ms ticks from the processor clock (BOARD_CPU_HZ). */
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
