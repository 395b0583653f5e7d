/* Board support of the firmware on QEMU's mps2-an386 and mps2-an505: SysTick clock, semihosting
 * command line, the test-only random source, and a polled driver for the board's LAN9118
 * (SMSC9220) Ethernet controller as an lwIP netif. Register offsets and bits are the
 * controller's (LAN9118 datasheet; QEMU models it in hw/net/lan9118.c); where each board maps it,
 * and its clock, are board.h's. No interrupt but SysTick: received frames are fetched by
 * board_net_poll(). */
#include "board.h"

#include <string.h>

#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

/* --- SysTick: the millisecond clock (sys_now) --------------------------------------------------
 */

#define SYST_CSR (*(volatile uint32_t*)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t*)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t*)0xE000E018u)

static volatile uint32_t ticks_ms;

void systick_handler(void) {
    ticks_ms = ticks_ms + 1u;
}

void board_clock_start(void) {
    SYST_RVR = BOARD_CPU_HZ / 1000u - 1u;
    SYST_CVR = 0;
    SYST_CSR = 7u; /* processor clock, interrupt, enable */
}

uint32_t board_now_ms(void) {
    return ticks_ms;
}

/* lwIP's clock under NO_SYS=1. */
u32_t sys_now(void) {
    return ticks_ms;
}

/* --- semihosting command line ------------------------------------------------------------------
 */

const char* board_cmdline(void) {
    static char line[256];
    struct {
        char* buf;
        uint32_t len;
    } block = {line, sizeof line - 1u};
    if (semihosting_call(SEMIHOSTING_SYS_GET_CMDLINE, (uintptr_t)&block) != 0u) return "";
    line[sizeof line - 1u] = '\0';
    return line;
}

long board_read_file(const char* path, uint8_t* buf, size_t cap) {
    uintptr_t open_args[3] = {(uintptr_t)path, 1u /* "rb" */, strlen(path)};
    const intptr_t handle = (intptr_t)semihosting_call(SEMIHOSTING_SYS_OPEN, (uintptr_t)open_args);
    intptr_t len;
    long result = -1;
    if (handle == -1) return -1;
    len = (intptr_t)semihosting_call(SEMIHOSTING_SYS_FLEN, (uintptr_t)&handle);
    if (len >= 0 && (size_t)len <= cap) {
        uintptr_t read_args[3] = {(uintptr_t)handle, (uintptr_t)buf, (uintptr_t)len};
        /* SYS_READ returns the number of bytes NOT read. */
        if (semihosting_call(SEMIHOSTING_SYS_READ, (uintptr_t)read_args) == 0u) result = (long)len;
    }
    (void)semihosting_call(SEMIHOSTING_SYS_CLOSE, (uintptr_t)&handle);
    return result;
}

/* --- TEST-ONLY random source (see board.h) -----------------------------------------------------
 */

static uint64_t random_state;

void board_test_random_seed(uint64_t seed) {
    random_state = seed;
}

/* splitmix64: a statistical expansion of the seed, not a cryptographic one. */
static uint64_t splitmix64(void) {
    uint64_t z = (random_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int32_t board_test_random(void* user, uint8_t* buf, size_t len) {
    (void)user;
    while (len > 0u) {
        uint64_t v = splitmix64();
        for (int i = 0; i < 8 && len > 0u; ++i, --len) {
            *buf++ = (uint8_t)v;
            v >>= 8;
        }
    }
    return 0;
}

uint32_t board_test_random32(void) {
    return (uint32_t)(splitmix64() >> 32);
}

/* --- LAN9118 -----------------------------------------------------------------------------------
 */

#define LAN_REG(off) (*(volatile uint32_t*)(BOARD_LAN9118_BASE + (off)))
#define RX_DATA_FIFO LAN_REG(0x00u)
#define TX_DATA_FIFO LAN_REG(0x20u)
#define RX_STATUS_FIFO LAN_REG(0x40u)
#define TX_STATUS_FIFO LAN_REG(0x48u)
#define BYTE_TEST LAN_REG(0x64u)
#define RX_CFG LAN_REG(0x6cu)
#define TX_CFG LAN_REG(0x70u)
#define HW_CFG LAN_REG(0x74u)
#define RX_FIFO_INF LAN_REG(0x7cu)
#define TX_FIFO_INF LAN_REG(0x80u)
#define MAC_CSR_CMD LAN_REG(0xa4u)
#define MAC_CSR_DATA LAN_REG(0xa8u)

#define BYTE_TEST_VALUE 0x87654321u
#define HW_CFG_SRST 0x00000001u
#define TX_CFG_TX_ON 0x00000002u
#define MAC_CSR_BUSY 0x80000000u
#define MAC_CSR_READ 0x40000000u
#define MAC_CR 1u
#define MAC_ADDRH 2u
#define MAC_ADDRL 3u
#define MAC_CR_FDPX 0x00100000u
#define MAC_CR_TXEN 0x00000008u
#define MAC_CR_RXEN 0x00000004u
#define TX_CMD_A_FIRST 0x00002000u
#define TX_CMD_A_LAST 0x00001000u
#define RX_STS_ERROR 0x00008000u

#define FRAME_MAX 1536u

static uint32_t frame[FRAME_MAX / 4u];

static int mac_wait(void) {
    for (uint32_t i = 0; i < 100000u; ++i) {
        if ((MAC_CSR_CMD & MAC_CSR_BUSY) == 0u) return 0;
    }
    return -1;
}

static uint32_t mac_read(uint32_t reg) {
    MAC_CSR_CMD = MAC_CSR_BUSY | MAC_CSR_READ | reg;
    (void)mac_wait();
    return MAC_CSR_DATA;
}

static void mac_write(uint32_t reg, uint32_t value) {
    MAC_CSR_DATA = value;
    MAC_CSR_CMD = MAC_CSR_BUSY | reg;
    (void)mac_wait();
}

static err_t lan_output(struct netif* netif, struct pbuf* p) {
    const uint32_t len = p->tot_len;
    (void)netif;
    if (len > FRAME_MAX) return ERR_BUF;
    if (pbuf_copy_partial(p, frame, (u16_t)len, 0) != len) return ERR_BUF;
    /* One segment, first and last: command A (sizes and flags), command B (tag and length). */
    TX_DATA_FIFO = TX_CMD_A_FIRST | TX_CMD_A_LAST | len;
    TX_DATA_FIFO = (len << 16) | len;
    for (uint32_t i = 0; i < (len + 3u) / 4u; ++i) {
        TX_DATA_FIFO = frame[i];
    }
    /* Drop the transmit statuses: nothing here waits for them. */
    while (((TX_FIFO_INF >> 16) & 0xffu) != 0u) {
        (void)TX_STATUS_FIFO;
    }
    return ERR_OK;
}

static err_t lan_netif_init(struct netif* netif) {
    const uint32_t lo = mac_read(MAC_ADDRL);
    const uint32_t hi = mac_read(MAC_ADDRH);
    netif->name[0] = 'e';
    netif->name[1] = 'n';
    netif->hwaddr_len = 6;
    netif->hwaddr[0] = (u8_t)lo;
    netif->hwaddr[1] = (u8_t)(lo >> 8);
    netif->hwaddr[2] = (u8_t)(lo >> 16);
    netif->hwaddr[3] = (u8_t)(lo >> 24);
    netif->hwaddr[4] = (u8_t)hi;
    netif->hwaddr[5] = (u8_t)(hi >> 8);
    netif->mtu = 1500;
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    netif->output = etharp_output;
    netif->linkoutput = lan_output;
    return ERR_OK;
}

static struct netif board_netif;

int board_net_init(void) {
    ip4_addr_t addr;
    ip4_addr_t mask;
    ip4_addr_t gw;
    if (BYTE_TEST != BYTE_TEST_VALUE) return -1;
    HW_CFG = HW_CFG_SRST;
    for (uint32_t i = 0; (HW_CFG & HW_CFG_SRST) != 0u; ++i) {
        if (i > 100000u) return -1;
    }
    RX_CFG = 0; /* no offset, no end padding */
    TX_CFG = TX_CFG_TX_ON;
    mac_write(MAC_CR, MAC_CR_FDPX | MAC_CR_TXEN | MAC_CR_RXEN); /* exact address + broadcast */

    lwip_init();
    IP4_ADDR(&addr, 10, 0, 2, 15);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 10, 0, 2, 2);
    if (netif_add(&board_netif, &addr, &mask, &gw, NULL, lan_netif_init, ethernet_input) == NULL) {
        return -1;
    }
    netif_set_default(&board_netif);
    netif_set_up(&board_netif);
    netif_set_link_up(&board_netif); /* QEMU's link is always up */
    return 0;
}

static void lan_receive(void) {
    while (((RX_FIFO_INF >> 16) & 0xffu) != 0u) {
        const uint32_t status = RX_STATUS_FIFO;
        const uint32_t len = (status >> 16) & 0x3fffu; /* frame + 4-byte CRC */
        const uint32_t words = (len + 3u) / 4u;
        const int good = (status & RX_STS_ERROR) == 0u && len > 4u && len <= FRAME_MAX;
        for (uint32_t i = 0; i < words; ++i) {
            const uint32_t w = RX_DATA_FIFO;
            if (good) frame[i] = w;
        }
        if (good) {
            struct pbuf* p = pbuf_alloc(PBUF_RAW, (u16_t)(len - 4u), PBUF_POOL);
            if (p == NULL) continue; /* no buffer: the frame is dropped, TCP resends */
            (void)pbuf_take(p, frame, (u16_t)(len - 4u));
            if (board_netif.input(p, &board_netif) != ERR_OK) (void)pbuf_free(p);
        }
    }
}

void board_net_poll(void) {
    lan_receive();
    sys_check_timeouts();
}

void board_net_poll_idle(void) {
    board_net_poll();
    __asm__ volatile("wfi");
}
