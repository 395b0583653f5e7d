/* lwIP 2.1 options of the board firmware: bare metal, NO_SYS=1 (raw API only: no sockets, no
 * netconn, no threads), IPv4 with ARP over Ethernet, TCP, static address, DNS from a local host
 * list. Small pools: the
 * firmware holds one connection at a time. */
#ifndef RESPLOCK_TESTS_BOARD_LWIPOPTS_H
#define RESPLOCK_TESTS_BOARD_LWIPOPTS_H

#include <stdint.h>

#define NO_SYS 1
#define SYS_LIGHTWEIGHT_PROT 0 /* lwIP runs only from the super-loop, never from an interrupt */
#define LWIP_SOCKET 0
#define LWIP_NETCONN 0

#define MEM_ALIGNMENT 4
#define MEM_SIZE (16 * 1024)
#define MEMP_NUM_PBUF 16
#define MEMP_NUM_TCP_PCB 4
#define MEMP_NUM_TCP_PCB_LISTEN 1
#define MEMP_NUM_TCP_SEG 32
#define PBUF_POOL_SIZE 24
#define PBUF_POOL_BUFSIZE 1536

#define LWIP_ETHERNET 1
#define LWIP_ARP 1
#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ICMP 1
#define LWIP_RAW 0
#define LWIP_UDP 1 /* for DNS */
#define LWIP_DHCP 0
/* Names: the host is "redis.board" in lwIP's local host list (no DNS server is configured, so
 * QEMU's resolver, which would query the outside world, is never asked; other names fail). */
#define LWIP_DNS 1
#define DNS_LOCAL_HOSTLIST 1
#define DNS_LOCAL_HOSTLIST_INIT \
    { DNS_LOCAL_HOSTLIST_ELEM("redis.board", IPADDR4_INIT_BYTES(10, 0, 2, 2)) }
#define LWIP_IGMP 0
#define LWIP_TCP 1
#define TCP_MSS 1460
#define TCP_WND (4 * TCP_MSS)
#define TCP_SND_BUF (4 * TCP_MSS)
#define TCP_SND_QUEUELEN (4 * TCP_SND_BUF / TCP_MSS)
#define LWIP_STATS 0
#define LWIP_NETIF_LINK_CALLBACK 0
#define LWIP_NETIF_STATUS_CALLBACK 0

/* Initial sequence numbers and local ports from the board's (test-only) random source. */
uint32_t board_test_random32(void);
#define LWIP_RAND() board_test_random32()

#endif /* RESPLOCK_TESTS_BOARD_LWIPOPTS_H */
