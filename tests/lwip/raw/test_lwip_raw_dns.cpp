// The raw-API port's name lookups (ports/lwip_raw) over lwIP 2.1.3 built from Debian's source
// package with NO_SYS=1 and its DNS client (Debian's liblwip has none), all in this process:
//   - a netif 10.11.0.1/24 whose traffic to its own address loops inside lwIP, and lwIP's loopif
//     127.0.0.1; a TCP listener on port 6379 of every address;
//   - lwIP's DNS server, 10.11.0.1:53: an lwIP UDP pcb that records each query and answers only
//     when a test says so;
//   - the test's clock: each round of the port's poll hook moves it 1 ms on, runs lwIP's loopback
//     and timers, then the test's script for that round. Every timing is exact and takes no real
//     time.
// lwIP's dns_gethostbyname() cannot be cancelled: a lookup the port gives up on at its deadline
// stays asked, and lwIP calls the port back whenever the answer comes (or after its last retry).
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "host_stack.hpp"
#include "lwip/dns.h"
#include "lwip/ip_addr.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"
#include "lwip/udp.h"
#include "resplock/ports/lwip_raw.h"

namespace {

using raw_test::clock_ms;
using raw_test::listen_on;
using raw_test::random_bytes;
using raw_test::stack_round;
using raw_test::stack_up;

constexpr std::uint16_t redis_port = 6379;

// The DNS server lwIP is configured with.
class DnsServer {
  public:
    void start() {
        pcb_ = udp_new();
        REQUIRE(pcb_ != nullptr);
        REQUIRE_EQ(udp_bind(pcb_, IP_ADDR_ANY, 53), ERR_OK);
        udp_recv(pcb_, on_query, this);
    }
    bool asked(std::string_view name) const { return find(name) != nullptr; }
    // Answers the last query for name with an A record for address (TTL 0: lwIP keeps nothing),
    // or with "no such name" when address is null.
    void answer(std::string_view name, const char* address) {
        const Query* q = find(name);
        if (!CHECK(q != nullptr)) return;
        std::vector<std::uint8_t> out(q->packet.begin(), q->packet.begin() + 12);
        out[2] = 0x81;                              // a response; recursion desired
        out[3] = address != nullptr ? 0x80 : 0x83;  // recursion available; 3: no such name
        out[6] = 0;
        out[7] = address != nullptr ? 1 : 0;  // answers
        std::memset(&out[8], 0, 4);
        out.insert(out.end(), q->packet.begin() + 12, q->packet.begin() + q->question_end);
        if (address != nullptr) {
            ip4_addr_t a;
            REQUIRE(ip4addr_aton(address, &a));
            const std::uint32_t host = lwip_ntohl(ip4_addr_get_u32(&a));
            const std::uint8_t record[] = {0xc0,
                                           0x0c,
                                           0,
                                           1,
                                           0,
                                           1,
                                           0,
                                           0,
                                           0,
                                           0,
                                           0,
                                           4,
                                           static_cast<std::uint8_t>(host >> 24),
                                           static_cast<std::uint8_t>(host >> 16),
                                           static_cast<std::uint8_t>(host >> 8),
                                           static_cast<std::uint8_t>(host)};
            out.insert(out.end(), record, record + sizeof record);
        }
        pbuf* p = pbuf_alloc(PBUF_TRANSPORT, static_cast<u16_t>(out.size()), PBUF_RAM);
        REQUIRE(p != nullptr);
        REQUIRE_EQ(pbuf_take(p, out.data(), static_cast<u16_t>(out.size())), ERR_OK);
        CHECK_EQ(udp_sendto(pcb_, p, &q->from, q->from_port), ERR_OK);
        pbuf_free(p);
    }
    void forget() { queries_.clear(); }

  private:
    struct Query {
        std::string name;
        std::vector<std::uint8_t> packet;  // as received
        std::size_t question_end = 0;      // offset just past the question
        ip_addr_t from;
        u16_t from_port = 0;
    };

    const Query* find(std::string_view name) const {
        for (auto q = queries_.rbegin(); q != queries_.rend(); ++q) {
            if (q->name == name) return &*q;
        }
        return nullptr;
    }

    static void on_query(void* arg, udp_pcb*, pbuf* p, const ip_addr_t* from, u16_t port) {
        auto* self = static_cast<DnsServer*>(arg);
        Query q;
        q.packet.resize(p->tot_len);
        (void)pbuf_copy_partial(p, q.packet.data(), p->tot_len, 0);
        pbuf_free(p);
        std::size_t at = 12;  // after the header: the question's labels
        while (at < q.packet.size() && q.packet[at] != 0) {
            const std::size_t len = q.packet[at];
            if (!q.name.empty()) q.name.push_back('.');
            q.name.append(reinterpret_cast<const char*>(&q.packet[at + 1]), len);
            at += len + 1;
        }
        q.question_end = at + 1 + 4;  // the root label, type and class
        if (q.question_end > q.packet.size()) return;
        ip_addr_copy(q.from, *from);
        q.from_port = port;
        self->queries_.push_back(q);
    }

    udp_pcb* pcb_ = nullptr;
    std::vector<Query> queries_;
};

DnsServer server;
std::function<void()> script;  // run at the end of each poll round

err_t on_accept(void*, tcp_pcb* pcb, err_t err) {
    return err == ERR_OK && pcb != nullptr ? ERR_OK : ERR_VAL;  // kept until the client closes
}

void world() {
    static bool up = false;
    if (up) return;
    up = true;
    stack_up();
    ip_addr_t dns;
    IP_ADDR4(&dns, 10, 11, 0, 1);
    dns_setserver(0, &dns);
    server.start();
    listen_on(redis_port, on_accept);
}

// The application's poll hook: one round of its main loop.
void poll(void*) {
    stack_round();
    if (script) script();
}

// Lets lwIP end every lookup still outstanding (it gives up after 1 + 1 + 2 + 3 s of its DNS
// timer without an answer) and forgets the queries seen so far.
void fresh() {
    world();
    script = nullptr;
    for (int i = 0; i < 10000; ++i) {
        poll(nullptr);
    }
    server.forget();
}

// Contexts in static storage, as on a device: a late answer that reaches one reaches memory that
// is still there.
resplock_lwip_raw_t ctx_a;
resplock_lwip_raw_t ctx_b;
alignas(resplock_lwip_raw_t) unsigned char gone_storage[sizeof(resplock_lwip_raw_t)];

resplock_port_t port_over(resplock_lwip_raw_t* ctx) {
    resplock_lwip_raw_config_t config{};
    config.poll = poll;
    config.random = random_bytes;
    resplock_port_t port{};
    CHECK_EQ(resplock_lwip_raw_port_init(ctx, &config, &port), RESPLOCK_STATUS_ok);
    return port;
}

std::int32_t connect(const resplock_port_t& port, const char* host, std::uint32_t timeout_ms) {
    return port.connect(port.ctx, host, redis_port, timeout_ms);
}

// The address the context's connection reached.
std::string remote(const resplock_lwip_raw_t& ctx) {
    if (ctx.pcb == nullptr) return "(not connected)";
    return ipaddr_ntoa(&ctx.pcb->remote_ip);
}

// While the port waits for second.test: first.test's answer (127.0.0.1) as soon as second.test
// is asked, then second.test's own (10.11.0.1) 20 ms later. Sets *late_sent when the first goes.
void late_first_answer_then_second(bool* late_sent) {
    *late_sent = false;
    std::uint32_t second_at = 0;
    script = [second_at, late_sent]() mutable {
        if (second_at == 0 && server.asked("second.test")) {
            server.answer("first.test", "127.0.0.1");
            *late_sent = true;
            second_at = clock_ms + 20;
        } else if (second_at != 0 && clock_ms == second_at) {
            server.answer("second.test", "10.11.0.1");
        }
    };
}

}  // namespace

TEST(a_late_answer_for_an_abandoned_lookup_is_not_taken_for_the_next_name) {
    fresh();
    resplock_port_t port = port_over(&ctx_a);
    // Nothing answers first.test within the connect's 300 ms: the port gives up, lwIP does not.
    CHECK_EQ(connect(port, "first.test", 300), RESPLOCK_PORT_TIMEOUT);
    REQUIRE(server.asked("first.test"));
    // The same context then looks up second.test, and first.test's answer comes first.
    bool late_sent = false;
    late_first_answer_then_second(&late_sent);
    REQUIRE_EQ(connect(port, "second.test", 1000), RESPLOCK_PORT_OK);
    CHECK(late_sent);
    CHECK_EQ(std::string_view(remote(ctx_a)), std::string_view("10.11.0.1"));
    port.close(port.ctx);
    script = nullptr;
}

TEST(a_late_answer_never_touches_a_context_that_is_gone) {
    fresh();
    auto* gone = reinterpret_cast<resplock_lwip_raw_t*>(gone_storage);
    resplock_port_t port = port_over(gone);
    CHECK_EQ(connect(port, "first.test", 300), RESPLOCK_PORT_TIMEOUT);
    // The context is gone and its memory holds other data when first.test's answer comes, during
    // another context's lookup.
    std::memset(gone_storage, 0x01, sizeof gone_storage);
    resplock_port_t other = port_over(&ctx_b);
    bool late_sent = false;
    late_first_answer_then_second(&late_sent);
    REQUIRE_EQ(connect(other, "second.test", 1000), RESPLOCK_PORT_OK);
    CHECK(late_sent);
    CHECK_EQ(std::string_view(remote(ctx_b)), std::string_view("10.11.0.1"));
    std::size_t changed = 0;
    for (unsigned char byte : gone_storage) {
        if (byte != 0x01) ++changed;
    }
    CHECK_EQ(changed, std::size_t{0});
    other.close(other.ctx);
    script = nullptr;
}

TEST(a_name_asked_again_after_its_lookup_was_abandoned_gets_the_answer) {
    // lwIP still asks for again.test when it is looked up again: the new lookup joins that
    // request, and the one answer is given to both, the abandoned lookup first.
    fresh();
    resplock_port_t port = port_over(&ctx_a);
    CHECK_EQ(connect(port, "again.test", 300), RESPLOCK_PORT_TIMEOUT);
    const std::uint32_t answer_at = clock_ms + 50;
    script = [answer_at] {
        if (clock_ms == answer_at) server.answer("again.test", "10.11.0.1");
    };
    REQUIRE_EQ(connect(port, "again.test", 1000), RESPLOCK_PORT_OK);
    CHECK_EQ(std::string_view(remote(ctx_a)), std::string_view("10.11.0.1"));
    port.close(port.ctx);
    script = nullptr;
}

TEST(a_name_the_server_does_not_know_is_no_host_as_soon_as_it_says_so) {
    fresh();
    resplock_port_t port = port_over(&ctx_a);
    bool answered = false;
    script = [&answered] {
        if (!answered && server.asked("missing.test")) {
            server.answer("missing.test", nullptr);
            answered = true;
        }
    };
    const std::uint32_t start = clock_ms;
    CHECK_EQ(connect(port, "missing.test", 1000), RESPLOCK_PORT_NO_HOST);
    CHECK(clock_ms - start < 10U);
    script = nullptr;
}

TEST(abandoned_lookups_hold_lwips_requests_until_lwip_ends_them) {
    fresh();
    resplock_port_t port = port_over(&ctx_a);
    // lwIP's DNS table holds 4 names; each of these stays asked after the port gives up on it.
    for (const char* name : {"one.test", "two.test", "three.test", "four.test"}) {
        CHECK_EQ(connect(port, name, 100), RESPLOCK_PORT_TIMEOUT);
    }
    std::uint32_t start = clock_ms;
    CHECK_EQ(connect(port, "five.test", 100), RESPLOCK_PORT_NO_HOST);  // no room, said at once
    CHECK(clock_ms - start < 2U);
    // Once lwIP has ended them (no answer after its last retry), names are looked up again.
    port.sleep_ms(port.ctx, 8000);
    script = [] {
        if (server.asked("five.test")) server.answer("five.test", "10.11.0.1");
    };
    start = clock_ms;
    REQUIRE_EQ(connect(port, "five.test", 1000), RESPLOCK_PORT_OK);
    CHECK(clock_ms - start < 10U);
    CHECK_EQ(std::string_view(remote(ctx_a)), std::string_view("10.11.0.1"));
    port.close(port.ctx);
    script = nullptr;
}
