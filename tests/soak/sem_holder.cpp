// One contender of the semaphore chaos test: until SIGTERM, waits for a place of the semaphore
// with a short random TTL, holds it for a random time (releasing early, overrunning its validity,
// or extending), and appends to its mode's Redis log what the library told it, in the order it
// happened (records in sem_common.hpp). The orchestrator SIGKILLs it at random moments.
// Usage: sem_holder PORT plain|fair LIMIT
#include <signal.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ports.hpp"
#include "resplock/ports/posix.h"
#include "resplock/variants/semaphore.hpp"
#include "sem_common.hpp"
#include "soak_common.hpp"

namespace {

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Semaphore;
using resplock::Status;

volatile sig_atomic_t stop_requested = 0;

void on_sigterm(int) {
    stop_requested = 1;
}

std::mt19937 rng;

std::uint32_t uniform(std::uint32_t lo, std::uint32_t hi) {
    return soak::uniform(rng, lo, hi);
}

using soak::sleep_ms;
using soak::valid_until_us;

// One connection to the server on 127.0.0.1.
struct Client {
    resplock_posix_t ctx;
    resplock_port_t port;
    ConnectionConfig config;
    std::vector<char> buf;
    Connection conn;

    Client(std::uint16_t server_port, std::uint32_t timeout_ms, std::size_t buf_size)
        : port(support::posix_port(ctx)),
          config(make_config(server_port, timeout_ms)),
          buf(buf_size),
          conn(port, config, buf.data(), buf.size()) {}

    static ConnectionConfig make_config(std::uint16_t server_port, std::uint32_t timeout_ms) {
        ConnectionConfig c;
        c.port = server_port;
        c.timeout_ms = timeout_ms;
        return c;
    }
};

// The log has its own connection, so a record never waits behind a semaphore call.
Client* log_client = nullptr;
const char* log_key = nullptr;
long my_pid = 0;

// Appends one record. A contender that cannot log stops (exit 3): an unlogged hold cannot be
// checked.
__attribute__((format(printf, 1, 2))) void log_record(const char* format, ...) {
    char line[256];
    va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (n < 0 || static_cast<std::size_t>(n) >= sizeof line) {
        std::fprintf(stderr, "sem_holder: record too long\n");
        std::exit(3);
    }
    const std::string_view cmd[3] = {"RPUSH", log_key, {line, static_cast<std::size_t>(n)}};
    resplock::resp::Reply reply;
    const Status s = log_client->conn.command(cmd, 3, reply);
    if (s != Status::ok) {
        std::fprintf(stderr, "sem_holder: RPUSH failed: %s\n", resplock::to_string(s));
        std::exit(3);
    }
}

// Works on a granted lease for a while, then releases it. Every record is written before the
// contender acts on what it says (R before the release), so a kill never leaves the log claiming
// less than the contender relied on.
void hold(Semaphore& sem, std::uint32_t ttl_ms, std::uint64_t fence, std::int64_t call_us) {
    const std::int64_t begin = soak::boot_us();
    std::int64_t valid_until = valid_until_us(sem);
    // A copy: a failed extend or the release forgets the token.
    char tok[resplock::max_token_len];
    const int len = static_cast<int>(sem.token().copy(tok, sizeof tok));
    log_record("A %ld %.*s %lld %lld %u %llu %lld", my_pid, len, tok, static_cast<long long>(begin),
               static_cast<long long>(valid_until), ttl_ms, static_cast<unsigned long long>(fence),
               static_cast<long long>(call_us));

    // 40 %: done well within the TTL; 20 %: works past it without extending (the lease lapses);
    // 40 %: works up to twice the TTL (at most max_hold_ms), extending when a third of the
    // validity is left.
    const std::uint32_t plan = uniform(0, 4);
    const bool extending = plan >= 3;
    std::uint32_t work_ms = plan <= 1   ? uniform(20, ttl_ms * 9 / 10)
                            : plan == 2 ? uniform(ttl_ms, ttl_ms * 3 / 2)
                                        : uniform(ttl_ms, ttl_ms * 2);
    if (work_ms > semsoak::max_hold_ms) work_ms = semsoak::max_hold_ms;
    const std::int64_t work_end = begin + static_cast<std::int64_t>(work_ms) * 1000;
    for (;;) {
        // Time first: a positive remaining_ms() read after it proves the lease valid at `now`.
        const std::int64_t now = soak::boot_us();
        const std::uint32_t left = sem.remaining_ms();
        if (left == 0) {
            log_record("L %ld %.*s lapsed", my_pid, len, tok);
            break;
        }
        if (stop_requested || now >= work_end) {
            log_record("R %ld %.*s %lld", my_pid, len, tok, static_cast<long long>(now));
            break;
        }
        if (extending && left < ttl_ms / 3) {
            const std::uint32_t new_ttl = uniform(semsoak::min_ttl_ms, semsoak::max_ttl_ms);
            const Status s = sem.extend(new_ttl);
            if (s != Status::ok) {
                log_record("L %ld %.*s extend:%d", my_pid, len, tok, static_cast<int>(s));
                break;
            }
            ttl_ms = new_ttl;
            valid_until = valid_until_us(sem);
            log_record("E %ld %.*s %lld %u", my_pid, len, tok, static_cast<long long>(valid_until),
                       ttl_ms);
            continue;
        }
        sleep_ms(uniform(5, 30));  // a step of "work"
    }
    const Status s = sem.release();
    log_record("X %ld %.*s %d", my_pid, len, tok, static_cast<int>(s));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4 || (std::strcmp(argv[2], "plain") != 0 && std::strcmp(argv[2], "fair") != 0)) {
        std::fprintf(stderr, "usage: sem_holder PORT plain|fair LIMIT\n");
        return 64;
    }
    const auto server_port = static_cast<std::uint16_t>(std::atoi(argv[1]));
    const bool fair = std::strcmp(argv[2], "fair") == 0;
    const auto limit = static_cast<std::uint32_t>(std::atoi(argv[3]));
    log_key = fair ? semsoak::log_fair : semsoak::log_plain;
    my_pid = static_cast<long>(getpid());
    rng.seed(static_cast<std::uint32_t>(my_pid) ^ static_cast<std::uint32_t>(soak::boot_us()));

    struct sigaction sa {};
    sa.sa_handler = on_sigterm;  // no SA_RESTART: a sleeping contender wakes up to stop
    sigaction(SIGTERM, &sa, nullptr);

    Client log(server_port, 5000, 512);
    log_client = &log;
    Client sems(server_port, 2000, resplock::semaphore_buffer_min());
    Semaphore sem(sems.conn, semsoak::key, limit, fair);
    char owner[24];
    std::snprintf(owner, sizeof owner, "c%ld", my_pid);
    if (sem.set_owner(owner) != Status::ok) {
        std::fprintf(stderr, "sem_holder: owner label refused\n");
        return 3;
    }
    log_record("S %ld %s %u", my_pid, fair ? "fair" : "plain", limit);

    while (!stop_requested) {
        const std::uint32_t ttl_ms = uniform(semsoak::min_ttl_ms, semsoak::max_ttl_ms);
        // A few seconds; the fair queue is worth a longer wait (16 contenders, 4 places).
        const std::uint32_t wait_ms = fair ? uniform(3000, 6000) : uniform(1500, 3000);
        const std::int64_t call_us = soak::boot_us();
        log_record("W %ld %lld %u %u", my_pid, static_cast<long long>(call_us), ttl_ms, wait_ms);
        std::uint64_t fence = 0;
        const Status s = sem.try_acquire(ttl_ms, wait_ms, &fence);
        if (s == Status::ok) {
            hold(sem, ttl_ms, fence, call_us);
        } else if (s == Status::busy) {
            log_record("B %ld %lld %lld", my_pid, static_cast<long long>(call_us),
                       static_cast<long long>(soak::boot_us()));
        } else {
            // The script may have run (reply lost): log the token, then undo what it did.
            const std::string_view tok = sem.token();
            const bool has_token = !tok.empty();
            log_record("U %ld %.*s %d", my_pid, has_token ? static_cast<int>(tok.size()) : 1,
                       has_token ? tok.data() : "-", static_cast<int>(s));
            if (has_token) (void)sem.release();
            sleep_ms(20);
        }
        sleep_ms(uniform(0, 20));
    }
    return 0;
}
