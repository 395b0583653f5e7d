// The lwIP stack the raw-API port's host tests run in: lwIP's core (NO_SYS=1) with one netif,
// 10.11.0.1/24, that sends nothing out (only traffic to its own address, looped by lwIP, goes
// anywhere), a clock the tests advance by hand and a fixed pseudo-random source.
#ifndef RESPLOCK_TESTS_LWIP_RAW_HOST_STACK_HPP
#define RESPLOCK_TESTS_LWIP_RAW_HOST_STACK_HPP

#include <cstddef>
#include <cstdint>

#include "lwip/tcp.h"

namespace raw_test {

// lwIP's clock (sys_now()), in ms: one more each stack_round().
extern std::uint32_t clock_ms;

// lwIP initialised and the netif up, once per process.
void stack_up();

// One round of an application's main loop: the clock advanced by 1 ms, the netif polled (its
// looped packets delivered) and lwIP's timers run.
void stack_round();

// A listener on the netif's port `port` whose connections go to `accept`.
void listen_on(std::uint16_t port, tcp_accept_fn accept);

// The port's random source (resplock_lwip_raw_config_t::random): lwip_test_random32()'s bytes.
std::int32_t random_bytes(void*, std::uint8_t* buf, std::size_t len);

}  // namespace raw_test

#endif
