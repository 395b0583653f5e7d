/* lwIP 2.1 options of the raw-API port's host test (tests/lwip/raw): the port's own target
 * configuration, NO_SYS=1 (raw API only, no threads), built for the host from Debian's lwIP source
 * package, with the DNS client that Debian's liblwip leaves out. IPv4 only; traffic to the test
 * netif's own address and to lwIP's loopif (127.0.0.1) loops inside lwIP. */
#ifndef RESPLOCK_TESTS_LWIP_RAW_LWIPOPTS_H
#define RESPLOCK_TESTS_LWIP_RAW_LWIPOPTS_H

#include <stdint.h>

#define NO_SYS 1
#define SYS_LIGHTWEIGHT_PROT 0
#define LWIP_SOCKET 0
#define LWIP_NETCONN 0

#define MEM_ALIGNMENT 8
#define MEM_SIZE (64 * 1024)
#define MEMP_NUM_TCP_PCB 16
#define MEMP_NUM_UDP_PCB 8
#define PBUF_POOL_SIZE 32

#define LWIP_ETHERNET 0
#define LWIP_ARP 0
#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ICMP 1
#define LWIP_RAW 0
#define LWIP_UDP 1
#define LWIP_TCP 1
#define LWIP_DHCP 0
#define LWIP_IGMP 0
#define LWIP_STATS 0
#define LWIP_NETIF_LOOPBACK 1
#define LWIP_HAVE_LOOPIF 1

/* The DNS client with lwIP's defaults (4 table entries, 4 retries, random query ids and source
 * ports, one outstanding query per name). */
#define LWIP_DNS 1

#ifdef __cplusplus
extern "C" {
#endif
/* The test's own generator (query ids, source ports, initial sequence numbers). */
uint32_t lwip_test_random32(void);
#ifdef __cplusplus
}
#endif
#define LWIP_RAND() lwip_test_random32()

#endif /* RESPLOCK_TESTS_LWIP_RAW_LWIPOPTS_H */
