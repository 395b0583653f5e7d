// The raw-API port's connection calls (ports/lwip_raw: connect, send, recv, close, sleep, clock,
// random) over lwIP 2.1.3 built from Debian's source package with NO_SYS=1, all in this process,
// against a real redis-server:
//   - a netif 10.11.0.1/24 whose traffic to its own address loops inside lwIP, and whose traffic
//     to any other address (10.11.0.2) vanishes: a host that never answers;
//   - a relay: an lwIP listener on 10.11.0.1:6379 that connects each accepted connection to the
//     real redis-server on the host's 127.0.0.1 and copies bytes both ways;
//   - a peer that never reads: an lwIP listener on 10.11.0.1:6390 that takes data without ever
//     reopening its receive window;
//   - the test's clock: each round of the port's poll hook moves it 1 ms on, runs lwIP's loopback
//     and timers, then waits for the relay's host sockets up to 1 ms of real time, so that the
//     server's replies come within the port's timeouts as they would on a device.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check.hpp"
#include "host_link.hpp"
#include "host_stack.hpp"
#include "lwip/ip_addr.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"
#include "redis_server.hpp"
#include "resplock/ports/lwip_raw.h"

namespace {

using raw_test::clock_ms;
using raw_test::listen_on;
using raw_test::random_bytes;
using raw_test::stack_round;
using raw_test::stack_up;

constexpr std::uint16_t relay_port = 6379;
constexpr std::uint16_t deaf_port = 6390;    // the peer that never reads
constexpr std::uint16_t closed_port = 6391;  // nothing listens here
constexpr const char* here = "10.11.0.1";
constexpr const char* nowhere = "10.11.0.2";  // on the netif's subnet; never answers

support::RedisServer& redis() {
    static support::RedisServer server;
    return server;
}

// One relayed connection: an lwIP pcb accepted on relay_port and a host socket to the server.
struct Relay {
    tcp_pcb* pcb = nullptr;
    int fd = -1;
    std::string to_server;  // bytes from lwIP not yet written to the host socket
    std::string to_port;    // bytes from the server not yet written to lwIP
};
std::vector<Relay*> relays;

void end_relay(Relay* r, bool reset) {
    if (r->pcb != nullptr) {
        tcp_arg(r->pcb, nullptr);
        tcp_recv(r->pcb, nullptr);
        tcp_err(r->pcb, nullptr);
        if (reset) {
            tcp_abort(r->pcb);
        } else if (tcp_close(r->pcb) != ERR_OK) {
            tcp_abort(r->pcb);
        }
        r->pcb = nullptr;
    }
    if (r->fd >= 0) ::close(r->fd);
    r->fd = -1;
}

err_t relay_recv(void* arg, tcp_pcb* pcb, pbuf* p, err_t) {
    auto* r = static_cast<Relay*>(arg);
    if (p == nullptr) {  // the port closed its side: so does the relay, both ways
        end_relay(r, false);
        return ERR_OK;
    }
    std::string bytes(p->tot_len, '\0');
    (void)pbuf_copy_partial(p, bytes.data(), p->tot_len, 0);
    r->to_server += bytes;
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

void relay_err(void* arg, err_t) {
    auto* r = static_cast<Relay*>(arg);
    r->pcb = nullptr;  // lwIP freed it
    if (r->fd >= 0) ::close(r->fd);
    r->fd = -1;
}

err_t relay_accept(void*, tcp_pcb* pcb, err_t err) {
    if (err != ERR_OK || pcb == nullptr) return ERR_VAL;
    auto* r = new Relay;
    r->pcb = pcb;
    r->fd = host_connect_loopback(redis().port());
    if (r->fd < 0) {
        std::printf("relay: cannot reach the server: %s\n", std::strerror(errno));
        delete r;
        tcp_abort(pcb);
        return ERR_ABRT;
    }
    tcp_arg(pcb, r);
    tcp_recv(pcb, relay_recv);
    tcp_err(pcb, relay_err);
    tcp_nagle_disable(pcb);
    relays.push_back(r);
    return ERR_OK;
}

// Moves bytes between each relay's pcb and host socket; waits up to 1 ms of real time for the
// server when a relay has nothing to move.
void pump() {
    std::vector<pollfd> fds;
    for (Relay* r : relays) {
        if (r->fd >= 0) fds.push_back({r->fd, POLLIN, 0});
    }
    (void)::poll(fds.data(), fds.size(), 1);
    for (Relay* r : relays) {
        if (r->fd < 0 || r->pcb == nullptr) continue;
        while (!r->to_server.empty()) {
            const ssize_t n = ::send(r->fd, r->to_server.data(), r->to_server.size(), MSG_NOSIGNAL);
            if (n <= 0) break;
            r->to_server.erase(0, static_cast<std::size_t>(n));
        }
        // What the server sent, into lwIP as far as its send buffer and queue allow; the rest
        // waits here, and the host socket is read only once this is drained (back-pressure).
        while (!r->to_port.empty()) {
            std::size_t n = tcp_sndbuf(r->pcb);
            if (n > r->to_port.size()) n = r->to_port.size();
            if (n > 0xffffU) n = 0xffffU;
            if (n == 0 || tcp_write(r->pcb, r->to_port.data(), static_cast<u16_t>(n),
                                    TCP_WRITE_FLAG_COPY) != ERR_OK) {
                break;
            }
            r->to_port.erase(0, n);
        }
        (void)tcp_output(r->pcb);
        if (!r->to_port.empty()) continue;
        char buf[4096];
        const ssize_t n = ::recv(r->fd, buf, sizeof buf, 0);
        if (n > 0) {
            r->to_port.assign(buf, static_cast<std::size_t>(n));
        } else if (n == 0) {  // the server closed: FIN to the port
            end_relay(r, false);
        }
    }
}

// The peer on deaf_port: takes segments off lwIP but never reopens its window (no tcp_recved).
err_t deaf_recv(void*, tcp_pcb* pcb, pbuf* p, err_t) {
    if (p == nullptr) {
        tcp_recv(pcb, nullptr);
        return tcp_close(pcb);
    }
    pbuf_free(p);
    return ERR_OK;
}

err_t deaf_accept(void*, tcp_pcb* pcb, err_t err) {
    if (err != ERR_OK || pcb == nullptr) return ERR_VAL;
    tcp_recv(pcb, deaf_recv);
    return ERR_OK;
}

void world() {
    static bool up = false;
    if (up) return;
    up = true;
    REQUIRE(redis().running());
    stack_up();
    listen_on(relay_port, relay_accept);
    listen_on(deaf_port, deaf_accept);
}

unsigned polls = 0;

// The application's poll hook: one round of its main loop.
void poll_round(void*) {
    ++polls;
    stack_round();
    pump();
}

resplock_lwip_raw_t ctx;

resplock_port_t port_over(resplock_lwip_raw_t* c) {
    world();
    resplock_lwip_raw_config_t config{};
    config.poll = poll_round;
    config.random = random_bytes;
    resplock_port_t port{};
    CHECK_EQ(resplock_lwip_raw_port_init(c, &config, &port), RESPLOCK_STATUS_ok);
    return port;
}

// A request in RESP, as the library encodes it.
std::string command(const std::vector<std::string>& args) {
    std::string out = "*" + std::to_string(args.size()) + "\r\n";
    for (const std::string& a : args) {
        out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    }
    return out;
}

// Sends all of bytes, each call with timeout_ms; false if a call failed or sent nothing.
bool send_all(const resplock_port_t& port, const std::string& bytes, std::uint32_t timeout_ms,
              unsigned* calls = nullptr) {
    std::size_t at = 0;
    while (at < bytes.size()) {
        const std::int32_t n =
            port.send(port.ctx, reinterpret_cast<const std::uint8_t*>(bytes.data()) + at,
                      bytes.size() - at, timeout_ms);
        if (calls != nullptr) ++*calls;
        if (n <= 0) {
            std::printf("      send returned %d after %zu of %zu bytes\n", n, at, bytes.size());
            return false;
        }
        at += static_cast<std::size_t>(n);
    }
    return true;
}

// Receives until `want` bytes came (or a call returns 0 or an error); at most chunk per call, each
// call with timeout_ms.
std::string recv_bytes(const resplock_port_t& port, std::size_t want, std::size_t chunk,
                       std::int32_t* last = nullptr, std::uint32_t timeout_ms = 2000) {
    std::string got;
    std::vector<std::uint8_t> buf(chunk);
    while (got.size() < want) {
        const std::int32_t n = port.recv(port.ctx, buf.data(), buf.size(), timeout_ms);
        if (last != nullptr) *last = n;
        if (n <= 0) break;
        got.append(reinterpret_cast<const char*>(buf.data()), static_cast<std::size_t>(n));
    }
    return got;
}

}  // namespace

TEST(init_refuses_a_missing_context_config_or_poll_hook) {
    resplock_lwip_raw_config_t config{};
    config.random = random_bytes;
    resplock_port_t port{};
    CHECK_EQ(resplock_lwip_raw_port_init(&ctx, &config, &port),
             RESPLOCK_STATUS_invalid_argument);  // no poll hook
    CHECK(port.connect == nullptr);
    config.poll = poll_round;
    CHECK_EQ(resplock_lwip_raw_port_init(nullptr, &config, &port),
             RESPLOCK_STATUS_invalid_argument);
    CHECK_EQ(resplock_lwip_raw_port_init(&ctx, nullptr, &port), RESPLOCK_STATUS_invalid_argument);
    CHECK_EQ(resplock_lwip_raw_port_init(&ctx, &config, nullptr), RESPLOCK_STATUS_invalid_argument);
    CHECK(port.connect == nullptr);
}

TEST(without_a_random_source_the_port_has_none_and_says_so) {
    resplock_lwip_raw_config_t config{};
    config.poll = poll_round;
    resplock_port_t port{};
    CHECK_EQ(resplock_lwip_raw_port_init(&ctx, &config, &port), RESPLOCK_STATUS_random_failed);
    CHECK(port.connect != nullptr);
    CHECK(port.random == nullptr);
}

TEST(random_and_clock_come_from_the_application) {
    struct Clock {
        std::uint32_t now = 0xfffffff0U;
        static std::uint32_t read(void* user) { return static_cast<Clock*>(user)->now; }
    } app_clock;
    struct Rng {
        int calls = 0;
        static std::int32_t fill(void* user, std::uint8_t* buf, std::size_t len) {
            ++static_cast<Rng*>(user)->calls;
            std::memset(buf, 0xa5, len);
            return 0;
        }
    } rng;
    resplock_lwip_raw_config_t config{};
    config.poll = poll_round;
    config.random = Rng::fill;
    config.random_user = &rng;
    config.now = Clock::read;
    config.now_user = &app_clock;
    resplock_port_t port{};
    REQUIRE_EQ(resplock_lwip_raw_port_init(&ctx, &config, &port), RESPLOCK_STATUS_ok);
    CHECK_EQ(port.now_ms(port.ctx), 0xfffffff0U);  // the application's clock, not sys_now()
    std::uint8_t bytes[4] = {};
    CHECK_EQ(port.random(port.ctx, bytes, sizeof bytes), 0);
    CHECK_EQ(rng.calls, 1);
    CHECK_EQ(bytes[3], std::uint8_t{0xa5});

    // Without a now hook the clock is lwIP's sys_now(); sleeping runs the stack until it has
    // moved on by the time asked, across the 32-bit wrap too.
    port = port_over(&ctx);
    CHECK_EQ(port.now_ms(port.ctx), clock_ms);
    clock_ms = 0xffffffffU - 5;
    const unsigned before = polls;
    port.sleep_ms(port.ctx, 20);
    CHECK_EQ(clock_ms, 14U);
    CHECK_EQ(polls - before, 20U);
    port.sleep_ms(port.ctx, 0);
    CHECK_EQ(polls - before, 20U);
}

TEST(calls_without_a_connection_fail_and_empty_ones_do_nothing) {
    resplock_port_t port = port_over(&ctx);
    std::uint8_t buf[8] = {};
    CHECK_EQ(port.recv(port.ctx, buf, sizeof buf, 10), RESPLOCK_PORT_ERROR);
    CHECK_EQ(port.send(port.ctx, buf, sizeof buf, 10), RESPLOCK_PORT_ERROR);
    CHECK_EQ(port.send(port.ctx, buf, 0, 10), 0);
    CHECK_EQ(port.recv(port.ctx, buf, 0, 10), 0);
    CHECK_EQ(port.connect(port.ctx, "", relay_port, 100), RESPLOCK_PORT_NO_HOST);
    CHECK_EQ(port.connect(port.ctx, nullptr, relay_port, 100), RESPLOCK_PORT_NO_HOST);
    port.close(port.ctx);  // closing what is not open is harmless
    port.close(port.ctx);
}

TEST(a_request_reaches_the_server_and_its_reply_comes_back) {
    resplock_port_t port = port_over(&ctx);
    REQUIRE_EQ(port.connect(port.ctx, here, relay_port, 1000), RESPLOCK_PORT_OK);
    CHECK(ctx.pcb != nullptr);
    const std::string set = command({"SET", "raw:key", "through-lwip", "PX", "60000"});
    CHECK(send_all(port, set, 1000));
    CHECK_EQ(recv_bytes(port, 5, 64), std::string("+OK\r\n"));
    CHECK_EQ(redis().cli({"GET", "raw:key"}), std::string("through-lwip"));

    // Nothing more to read: recv waits out its timeout on the clock and returns 0.
    std::uint8_t buf[16];
    const std::uint32_t start = clock_ms;
    CHECK_EQ(port.recv(port.ctx, buf, sizeof buf, 50), 0);
    CHECK(clock_ms - start >= 50U);
    CHECK(clock_ms - start <= 52U);
    // A timeout of 0 still runs one round of the stack.
    const unsigned before = polls;
    CHECK_EQ(port.recv(port.ctx, buf, sizeof buf, 0), 0);
    CHECK_EQ(polls - before, 1U);

    port.close(port.ctx);
    CHECK(ctx.pcb == nullptr);
    CHECK_EQ(port.send(port.ctx, buf, sizeof buf, 10), RESPLOCK_PORT_ERROR);
    CHECK_EQ(redis().cli({"DEL", "raw:key"}), std::string("1"));
}

TEST(a_reply_larger_than_the_ring_is_held_back_and_arrives_whole) {
    const std::string value(3000, 'v');
    std::string patterned = value;
    for (std::size_t i = 0; i < patterned.size(); ++i) {
        patterned[i] = static_cast<char>('a' + i % 26);
    }
    REQUIRE_EQ(redis().cli({"SET", "raw:big", patterned}), std::string("OK"));
    resplock_port_t port = port_over(&ctx);
    REQUIRE_EQ(port.connect(port.ctx, here, relay_port, 1000), RESPLOCK_PORT_OK);
    CHECK(send_all(port, command({"GET", "raw:big"}), 1000));
    // The whole reply comes while the application does not read: the ring (512 bytes) fills, one
    // pbuf is held, and lwIP keeps the rest, with the window closed.
    port.sleep_ms(port.ctx, 200);
    CHECK_EQ(ctx.rx_len, std::uint16_t{RESPLOCK_LWIP_RAW_RX_SIZE});
    CHECK(ctx.held != nullptr);
    const std::string expected = "$3000\r\n" + patterned + "\r\n";
    // Read in pieces of 100 bytes: every byte in order, none lost or repeated. Segments that came
    // while lwIP still kept refused data were dropped unacknowledged: the server's side sends them
    // again at its retransmission timeout (about 1 to 3 s), hence the longer wait.
    std::int32_t last = 0;
    const std::string got = recv_bytes(port, expected.size(), 100, &last, 10000);
    CHECK_EQ(got.size(), expected.size());
    if (!CHECK(got == expected)) std::printf("      last recv: %d\n", last);
    CHECK_EQ(ctx.rx_len, std::uint16_t{0});
    CHECK(ctx.held == nullptr);
    // The same connection still works.
    CHECK(send_all(port, command({"DEL", "raw:big"}), 1000));
    CHECK_EQ(recv_bytes(port, 4, 64), std::string(":1\r\n"));
    port.close(port.ctx);
}

TEST(a_request_larger_than_the_send_buffer_goes_in_pieces) {
    std::string value(20000, '\0');
    for (std::size_t i = 0; i < value.size(); ++i) {
        value[i] = static_cast<char>('A' + i % 23);
    }
    resplock_port_t port = port_over(&ctx);
    REQUIRE_EQ(port.connect(port.ctx, here, relay_port, 1000), RESPLOCK_PORT_OK);
    unsigned calls = 0;
    CHECK(send_all(port, command({"SET", "raw:long", value}), 1000, &calls));
    CHECK(calls > 1U);  // lwIP's send buffer holds much less than 20000 bytes
    CHECK_EQ(recv_bytes(port, 5, 64), std::string("+OK\r\n"));
    CHECK_EQ(redis().cli({"STRLEN", "raw:long"}), std::string("20000"));
    CHECK(redis().cli({"GETRANGE", "raw:long", "19990", "19999"}) == value.substr(19990));
    CHECK_EQ(redis().cli({"DEL", "raw:long"}), std::string("1"));
    port.close(port.ctx);
}

TEST(a_peer_that_stops_reading_makes_send_return_0_at_its_timeout) {
    resplock_port_t port = port_over(&ctx);
    REQUIRE_EQ(port.connect(port.ctx, here, deaf_port, 1000), RESPLOCK_PORT_OK);
    const std::string bytes(20000, 'x');
    std::size_t sent = 0;
    std::int32_t n = 1;
    while (n > 0 && sent < bytes.size()) {
        n = port.send(port.ctx, reinterpret_cast<const std::uint8_t*>(bytes.data()) + sent,
                      bytes.size() - sent, 100);
        if (n > 0) sent += static_cast<std::size_t>(n);
    }
    // The peer's window and the port's send buffer fill; then a call sends nothing within its
    // 100 ms and says so.
    CHECK_EQ(n, 0);
    CHECK(sent > 0U);
    CHECK(sent < bytes.size());
    const std::uint32_t start = clock_ms;
    CHECK_EQ(port.send(port.ctx, reinterpret_cast<const std::uint8_t*>(bytes.data()), 10, 30), 0);
    CHECK(clock_ms - start >= 30U);
    CHECK(clock_ms - start <= 32U);
    port.close(port.ctx);
    CHECK(ctx.pcb == nullptr);
}

TEST(the_servers_close_is_seen_after_its_last_bytes) {
    resplock_port_t port = port_over(&ctx);
    REQUIRE_EQ(port.connect(port.ctx, here, relay_port, 1000), RESPLOCK_PORT_OK);
    CHECK(send_all(port, command({"QUIT"}), 1000));
    // The server answers +OK and closes: the reply first, then the close on every call.
    port.sleep_ms(port.ctx, 100);
    std::int32_t last = 0;
    CHECK_EQ(recv_bytes(port, 5, 64, &last), std::string("+OK\r\n"));
    std::uint8_t buf[8];
    CHECK_EQ(port.recv(port.ctx, buf, sizeof buf, 100), RESPLOCK_PORT_CLOSED);
    CHECK_EQ(port.send(port.ctx, buf, sizeof buf, 100), RESPLOCK_PORT_CLOSED);
    port.close(port.ctx);
}

TEST(a_reset_from_the_peer_is_closed_on_send_and_recv) {
    resplock_port_t port = port_over(&ctx);
    REQUIRE_EQ(port.connect(port.ctx, here, relay_port, 1000), RESPLOCK_PORT_OK);
    port.sleep_ms(port.ctx, 5);  // the relay has accepted
    REQUIRE(!relays.empty());
    Relay* r = relays.back();
    REQUIRE(r->pcb != nullptr);
    end_relay(r, true);  // RST to the port
    port.sleep_ms(port.ctx, 5);
    std::uint8_t buf[8] = {};
    CHECK_EQ(port.recv(port.ctx, buf, sizeof buf, 100), RESPLOCK_PORT_CLOSED);
    CHECK_EQ(port.send(port.ctx, buf, sizeof buf, 100), RESPLOCK_PORT_CLOSED);
    CHECK(ctx.pcb == nullptr);  // lwIP freed it; the port forgot it
    port.close(port.ctx);
    // The context connects again afterwards.
    REQUIRE_EQ(port.connect(port.ctx, here, relay_port, 1000), RESPLOCK_PORT_OK);
    CHECK(send_all(port, command({"PING"}), 1000));
    CHECK_EQ(recv_bytes(port, 7, 64), std::string("+PONG\r\n"));
    port.close(port.ctx);
}

TEST(a_port_nothing_listens_on_is_refused_at_once) {
    resplock_port_t port = port_over(&ctx);
    const std::uint32_t start = clock_ms;
    CHECK_EQ(port.connect(port.ctx, here, closed_port, 1000), RESPLOCK_PORT_REFUSED);
    CHECK(clock_ms - start < 10U);
    CHECK(ctx.pcb == nullptr);
}

TEST(a_host_that_never_answers_times_out_at_the_deadline) {
    resplock_port_t port = port_over(&ctx);
    const std::uint32_t start = clock_ms;
    CHECK_EQ(port.connect(port.ctx, nowhere, relay_port, 300), RESPLOCK_PORT_TIMEOUT);
    CHECK(clock_ms - start >= 300U);
    CHECK(clock_ms - start <= 302U);
    CHECK(ctx.pcb == nullptr);
    // A second connect on a connected context first lets the old connection go.
    REQUIRE_EQ(port.connect(port.ctx, here, relay_port, 1000), RESPLOCK_PORT_OK);
    REQUIRE_EQ(port.connect(port.ctx, here, relay_port, 1000), RESPLOCK_PORT_OK);
    CHECK(ctx.pcb != nullptr);
    CHECK(send_all(port, command({"PING"}), 1000));
    CHECK_EQ(recv_bytes(port, 7, 64), std::string("+PONG\r\n"));
    port.close(port.ctx);
}
