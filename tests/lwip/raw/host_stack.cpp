#include "host_stack.hpp"

#include "check.hpp"
#include "lwip/init.h"
#include "lwip/ip4.h"
#include "lwip/ip_addr.h"
#include "lwip/netif.h"
#include "lwip/timeouts.h"

namespace raw_test {

std::uint32_t clock_ms = 1000;

namespace {

std::uint32_t random_state = 0x2545f491U;
netif the_netif;

err_t drop(netif*, pbuf*, const ip4_addr_t*) {
    return ERR_OK;
}

err_t init_netif(netif* nif) {
    nif->name[0] = 't';
    nif->name[1] = 'h';
    nif->output = drop;
    nif->mtu = 1500;
    return ERR_OK;
}

}  // namespace

void stack_up() {
    static bool up = false;
    if (up) return;
    up = true;
    lwip_init();
    ip4_addr_t ip, mask, gw;
    IP4_ADDR(&ip, 10, 11, 0, 1);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 0, 0, 0, 0);
    REQUIRE(netif_add(&the_netif, &ip, &mask, &gw, nullptr, init_netif, ip4_input) != nullptr);
    netif_set_up(&the_netif);
    netif_set_link_up(&the_netif);
}

void stack_round() {
    ++clock_ms;
    netif_poll_all();
    sys_check_timeouts();
}

void listen_on(std::uint16_t port, tcp_accept_fn accept) {
    tcp_pcb* listener = tcp_new();
    REQUIRE(listener != nullptr);
    REQUIRE_EQ(tcp_bind(listener, IP_ADDR_ANY, port), ERR_OK);
    listener = tcp_listen(listener);
    REQUIRE(listener != nullptr);
    tcp_accept(listener, accept);
}

std::int32_t random_bytes(void*, std::uint8_t* buf, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) {
        buf[i] = static_cast<std::uint8_t>(lwip_test_random32());
    }
    return 0;
}

}  // namespace raw_test

extern "C" u32_t sys_now(void) {
    return raw_test::clock_ms;
}

extern "C" std::uint32_t lwip_test_random32(void) {
    std::uint32_t x = raw_test::random_state;  // xorshift32
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    raw_test::random_state = x;
    return x;
}
