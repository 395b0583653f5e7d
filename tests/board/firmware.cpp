// The board firmware: a bare-metal super-loop (lwIP NO_SYS=1, no RTOS) that takes a real lock on
// the host's redis-server through QEMU's user network (gateway 10.0.2.2), over the lwIP raw-API
// port. The host-side driver (test_board.cpp) plays the other party; the two synchronise through
// the lock keys and the "STEP" lines printed here (semihosting console). The same source serves
// QEMU's mps2-an386 and mps2-an505 (board.h); the first line names the board. The command line
// (semihosting) gives the server's port and the per-run random seed: "port=N seed=HEX".
// Exit status 0 only if every step saw what it expected.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "board.h"
#include "lwip/priv/tcp_priv.h"  // lwIP's pcb lists, for the leak check of the last step
#include "resplock/core/connection.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/core/lock_options.hpp"
#include "resplock/ports/lwip_raw.h"
#include "resplock/variants/renewer.hpp"
#ifdef BOARD_TLS
#include "mbedtls/memory_buffer_alloc.h"
#include "resplock/ports/mbedtls.h"
#endif

using resplock::Status;

namespace {

const char* name(Status s) {
#define RESPLOCK_BOARD_NAME(n, text) #n,
    static const char* const names[] = {RESPLOCK_STATUS_LIST(RESPLOCK_BOARD_NAME)};
#undef RESPLOCK_BOARD_NAME
    const auto i = static_cast<unsigned>(s);
    return i < sizeof names / sizeof names[0] ? names[i] : "?";
}

int failures = 0;

void step(const char* format, ...) __attribute__((format(printf, 1, 2)));
void step(const char* format, ...) {
    va_list args;
    va_start(args, format);
    std::fputs("STEP ", stdout);
    std::vprintf(format, args);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    va_end(args);
}

// `value` in decimal into `out` (a printf without %llu, as small C libraries have, shows it too).
const char* decimal(std::uint64_t value, char (&out)[21]) {
    char* p = out + sizeof out - 1;
    *p = '\0';
    do {
        *--p = static_cast<char>('0' + value % 10);
        value /= 10;
    } while (value != 0);
    return p;
}

void expect(bool ok, const char* what, Status s) {
    if (!ok) {
        ++failures;
        std::printf("FAIL: %s (%s)\n", what, name(s));
        std::fflush(stdout);
    }
}

// "key=value" from the command line, or nullptr.
const char* arg(const char* line, const char* key) {
    const std::size_t n = std::strlen(key);
    for (const char* p = line; (p = std::strstr(p, key)) != nullptr; p += n) {
        if ((p == line || p[-1] == ' ') && p[n] == '=') return p + n + 1;
    }
    return nullptr;
}

// The port's poll hook: one round of network work, then sleep until the next interrupt.
void net_poll(void*) {
    board_net_poll_idle();
}

uint32_t clock_ms(void*) {
    return board_now_ms();
}

// Runs the super-loop's network work for ms milliseconds.
void run_for(uint32_t ms) {
    const uint32_t start = board_now_ms();
    while (board_now_ms() - start < ms)
        board_net_poll_idle();
}

resplock_lwip_raw_t net;  // the port's context: static, it must not move while connected
#ifdef BOARD_TLS
resplock_mbedtls_t tls;              // the TLS port over it (large: static)
resplock_mbedtls_t wrong;            // one expecting another server name (step 0)
unsigned char tls_arena[96 * 1024];  // every allocation mbedTLS makes
unsigned char ca[2048];              // the CA certificate (DER), read from the host
#endif
char buffer[4096];               // the connection's buffer: the largest reply read is GET board:big
resplock_lwip_raw_t silent_net;  // a second connection, to a peer that never answers (step 7b)
char silent_buffer[512];

Status lost_why = Status::ok;
bool lost = false;

void on_lost(void*, void*, Status why) {
    lost = true;
    lost_why = why;
}

bool connection_error(Status s) {
    return s == Status::connect_failed || s == Status::closed || s == Status::io_error ||
           s == Status::timeout || s == Status::unknown_outcome;
}

}  // namespace

int main() {
    const char* line = board_cmdline();
    const char* port_text = arg(line, "port");
    const char* seed_text = arg(line, "seed");
    if (port_text == nullptr || seed_text == nullptr) {
        std::printf("FAIL: command line \"%s\" lacks port=N seed=HEX\n", line);
        return 2;
    }
    board_test_random_seed(std::strtoull(seed_text, nullptr, 16));
    board_clock_start();
    if (board_net_init() != 0) {
        std::printf("FAIL: no LAN9118 at 0x%08lx (%s)\n",
                    static_cast<unsigned long>(BOARD_LAN9118_BASE), BOARD_NAME);
        return 2;
    }

    resplock_lwip_raw_config_t cfg{};
    cfg.poll = net_poll;
    cfg.random = board_test_random;  // TEST ONLY (board.h): a real board uses its TRNG
    cfg.now = clock_ms;
    resplock_port_t port;
    if (resplock_lwip_raw_port_init(&net, &cfg, &port) != RESPLOCK_STATUS_ok) {
        std::printf("FAIL: port init\n");
        return 2;
    }
#ifdef BOARD_TLS
    // TLS over the raw-API port, verifying the server's certificate against the test CA (the host
    // passes its path: "ca=PATH"); the server's certificate names "localhost", not 10.0.2.2.
    const char* ca_path = arg(line, "ca");
    char path[200] = "";
    for (std::size_t i = 0;
         ca_path != nullptr && ca_path[i] != '\0' && ca_path[i] != ' ' && i + 1 < sizeof path;
         ++i) {
        path[i] = ca_path[i];
        path[i + 1] = '\0';
    }
    const long ca_len = board_read_file(path, ca, sizeof ca);
    if (ca_len <= 0) {
        std::printf("FAIL: cannot read the CA certificate \"%s\" (%s)\n", path, line);
        return 2;
    }
    mbedtls_memory_buffer_alloc_init(tls_arena, sizeof tls_arena);
    const resplock_port_t inner = port;
    resplock_mbedtls_config_t tls_cfg{};
    tls_cfg.inner = &inner;
    tls_cfg.ca = ca;
    tls_cfg.ca_len = static_cast<std::size_t>(ca_len);
    tls_cfg.server_name = "localhost";
    if (resplock_mbedtls_port_init(&tls, &tls_cfg, &port) != RESPLOCK_STATUS_ok) {
        std::printf("FAIL: TLS port init\n");
        return 2;
    }
#endif
    resplock::ConnectionConfig cc;
    cc.host = "redis.board";  // 10.0.2.2 through lwIP's local host list (lwipopts.h)
    cc.port = static_cast<std::uint16_t>(std::strtoul(port_text, nullptr, 10));
#ifdef BOARD_TLS
    cc.timeout_ms = 5000;  // the connect timeout covers the handshake, slow under emulation
#else
    cc.timeout_ms = 2000;
#endif
    resplock::Connection conn(port, cc, buffer, sizeof buffer);
    resplock::Lock lock(conn, "board:lock");
    resplock::Lock gate(conn, "board:gate");
#ifdef BOARD_TLS
    step("up %s 10.0.2.15 -> %s:%u tls", BOARD_NAME, cc.host, static_cast<unsigned>(cc.port));
#else
    step("up %s 10.0.2.15 -> %s:%u", BOARD_NAME, cc.host, static_cast<unsigned>(cc.port));
#endif

#ifdef BOARD_TLS
    // 0. Verification is on: the same server under a name its certificate does not carry is
    // refused during the handshake.
    {
        resplock_mbedtls_config_t wrong_cfg = tls_cfg;
        wrong_cfg.server_name = "not-the-server";
        resplock_port_t wrong_port;
        resplock_status_t init = resplock_mbedtls_port_init(&wrong, &wrong_cfg, &wrong_port);
        Status v = static_cast<Status>(init);
        resplock_mbedtls_failure_t why = RESPLOCK_MBEDTLS_FAILURE_none;
        if (init == RESPLOCK_STATUS_ok) {
            char small[256];
            resplock::Connection probe(wrong_port, cc, small, sizeof small);
            v = probe.connect(resplock::Deadline::after(wrong_port, cc.timeout_ms));
            why = resplock_mbedtls_failure(&wrong);
            probe.close();
        }
        resplock_mbedtls_free(&wrong);
        step("wrong-name %s %s", name(v),
             why == RESPLOCK_MBEDTLS_FAILURE_verify ? "verify-failed" : "not-verify-failure");
        expect(v != Status::ok && why == RESPLOCK_MBEDTLS_FAILURE_verify,
               "a certificate for another name is refused", v);
    }
#endif

    // 0. Set-up rules: no config or no poll hook is invalid_argument; no random source is
    // random_failed, with a port whose random is NULL.
    {
        resplock_port_t p{};
        resplock_lwip_raw_config_t bad = cfg;
        const resplock_status_t no_cfg = resplock_lwip_raw_port_init(&silent_net, nullptr, &p);
        bad.poll = nullptr;
        const resplock_status_t no_poll = resplock_lwip_raw_port_init(&silent_net, &bad, &p);
        bad = cfg;
        bad.random = nullptr;
        const resplock_status_t no_random = resplock_lwip_raw_port_init(&silent_net, &bad, &p);
        const bool ok = no_cfg == RESPLOCK_STATUS_invalid_argument &&
                        no_poll == RESPLOCK_STATUS_invalid_argument &&
                        no_random == RESPLOCK_STATUS_random_failed && p.random == nullptr &&
                        p.connect != nullptr;
        step("init %s", ok ? "checked" : "wrong");
        expect(ok, "port set-up rules", static_cast<Status>(no_random));
    }

    // 0. A name lwIP cannot resolve: no_host, at once.
    {
        resplock::ConnectionConfig nc = cc;
        nc.host = "nowhere.board";
        resplock::Connection nowhere(port, nc, silent_buffer, sizeof silent_buffer);
        const Status v = nowhere.connect(resplock::Deadline::after(port, nc.timeout_ms));
        step("no-host %s", name(v));
        expect(v == Status::no_host, "an unknown name", v);
    }

    // 1. The host holds the lock: acquiring it is busy.
    Status s = lock.acquire(10000);
    step("busy %s", name(s));
    expect(s == Status::busy, "acquire while the host holds the lock", s);

    // 2. The host releases it on seeing that line; waiting gets it.
    s = lock.try_acquire(10000, 20000);
    step("acquired %s %.*s", name(s), static_cast<int>(lock.token().size()), lock.token().data());
    expect(s == Status::ok && lock.held(), "try_acquire with a wait", s);

    // 3. Extend to 60 s; the host checks PTTL and the token, then releases the gate.
    s = lock.extend(60000);
    step("extended %s %.*s", name(s), static_cast<int>(lock.token().size()), lock.token().data());
    expect(s == Status::ok, "extend", s);
    s = gate.try_acquire(1000, 30000);
    expect(s == Status::ok, "gate after the host's check", s);
    (void)gate.release();

    // 4. Release.
    s = lock.release();
    step("released %s", name(s));
    expect(s == Status::ok, "release", s);

    // 5. A fencing number (the host set {board:fenced}:fence to 9000000000000000041, far above
    // the server's clock in microseconds, before the run): the next one, all 64 bits of it. Each
    // later step has a key of its own, so the host's checks of the earlier ones cannot race with
    // it.
    resplock::Lock fenced_lock(conn, "board:fenced");
    resplock::AcquireOptions fenced;
    fenced.fence = true;
    std::uint64_t fence = 0;
    s = fenced_lock.acquire(10000, fenced, &fence);
    char digits[21];
    step("fence %s %s", name(s), decimal(fence, digits));
    expect(s == Status::ok && fence == 9000000000000000042u, "fenced acquire", s);
    s = fenced_lock.release();
    expect(s == Status::ok, "release after fence", s);

    // 6. A reply far larger than the port's receive ring: back-pressured, not dropped.
    {
        const std::string_view get[] = {"GET", "board:big"};
        resplock::resp::Reply reply;
        s = conn.command(get, 2, reply);
        bool same = s == Status::ok && reply.count == 1 &&
                    reply.top().is(resplock::resp::Type::bulk_string) && reply.top().size == 3000u;
        for (std::uint32_t i = 0; same && i < reply.top().size; ++i) {
            same = reply.top().data[i] == static_cast<char>('a' + i % 26u);
        }
        step("big %s %u %s", name(s),
             s == Status::ok ? static_cast<unsigned>(reply.top().size) : 0u,
             same ? "intact" : "corrupt");
        expect(same, "3000-byte reply through the port's ring", s);
    }

    // 7. The renewal driver in the super-loop keeps a 1.5 s lock alive for 4 s.
    resplock::Renewer renewer;
    resplock::Lock renewed(conn, "board:renewed");
    s = renewed.acquire(1500);
    expect(s == Status::ok, "acquire for renewal", s);
    s = renewer.watch(renewed, 1500, on_lost, nullptr, 200);
    expect(s == Status::ok, "watch", s);
    const uint32_t start = board_now_ms();
    while (board_now_ms() - start < 4000u && !lost) {
        const uint32_t next = renewer.tick(board_now_ms());
        run_for(next < 50u ? next : 50u);
    }
    step("renewed %s held=%d remaining=%lu %.*s", lost ? name(lost_why) : "ok",
         renewed.held() ? 1 : 0, static_cast<unsigned long>(renewed.remaining_ms()),
         static_cast<int>(renewed.token().size()), renewed.token().data());
    expect(!lost && renewed.held(), "renewed for 4 s", lost_why);

    // 7b. A peer that accepts and never answers (the host's port "silent=N"): the call ends with
    // its timeout (the renewer keeps the lock meanwhile: the wait is shorter than its schedule).
    if (const char* silent_text = arg(line, "silent")) {
        resplock_port_t silent_port;
        Status init =
            static_cast<Status>(resplock_lwip_raw_port_init(&silent_net, &cfg, &silent_port));
#ifdef BOARD_TLS
        const resplock_port_t silent_inner = silent_port;
        if (init == Status::ok) {
            resplock_mbedtls_config_t silent_cfg = tls_cfg;
            silent_cfg.inner = &silent_inner;
            init =
                static_cast<Status>(resplock_mbedtls_port_init(&wrong, &silent_cfg, &silent_port));
        }
#endif
        resplock::ConnectionConfig sc = cc;
        sc.port = static_cast<std::uint16_t>(std::strtoul(silent_text, nullptr, 10));
        sc.timeout_ms = 300;
        resplock::Connection silent(silent_port, sc, silent_buffer, sizeof silent_buffer);
        resplock::Lock nobody(silent, "board:silent");
        const uint32_t before = board_now_ms();
        s = init == Status::ok ? nobody.acquire(10000) : init;
        const uint32_t took = board_now_ms() - before;
        silent.close();
#ifdef BOARD_TLS
        resplock_mbedtls_free(&wrong);
#endif
        step("silent %s %lu ms", name(s), static_cast<unsigned long>(took));
        expect((s == Status::timeout || s == Status::unknown_outcome) && !nobody.held(),
               "a silent peer ends the call at its timeout", s);
    }

    // 8. The host kills the server on seeing the next line: the renewer's extends fail, the lock
    // is reported lost once its validity runs out, and a new attempt reports the connection
    // error. Never "held".
    step("kill-me");
    const uint32_t kill_start = board_now_ms();
    while (board_now_ms() - kill_start < 20000u && !lost) {
        const uint32_t next = renewer.tick(board_now_ms());
        run_for(next < 50u ? next : 50u);
    }
    // Lost is reported while up to the loss margin of validity is left; once that has passed the
    // lock is no longer held locally either.
    if (lost) run_for(renewed.remaining_ms() + 1u);
    resplock::Lock again(conn, "board:other");
    s = again.acquire(1500);
    step("after-kill lost=%s held=%d acquire=%s", lost ? name(lost_why) : "no",
         renewed.held() ? 1 : 0, name(s));
    expect(lost && !renewed.held(), "lock reported lost after the server died", lost_why);
    expect(connection_error(s) && !again.held(), "acquire after the server died", s);

    // 9. Every pcb the port made was closed or freed: none of lwIP's lists holds one that still
    // points at a port context (lwIP keeps closed ones in FIN/TIME_WAIT states, detached).
    conn.close();
    run_for(200);
    unsigned attached = 0;
    unsigned total = 0;
    struct tcp_pcb* const lists[] = {tcp_active_pcbs, tcp_tw_pcbs, tcp_bound_pcbs};
    for (struct tcp_pcb* head : lists) {
        for (struct tcp_pcb* pcb = head; pcb != nullptr; pcb = pcb->next) {
            ++total;
            if (pcb->callback_arg == &net || pcb->callback_arg == &silent_net) ++attached;
        }
    }
    step("pcbs attached=%u in-lwip=%u", attached, total);
    expect(attached == 0, "no pcb left attached to a port context", Status::ok);

    step("done failures=%d", failures);
    return failures == 0 ? 0 : 1;
}
