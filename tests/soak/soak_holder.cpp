// One contender of the soak test: until SIGTERM, takes one of the soak keys with a short random
// TTL, holds it for a random time (releasing early, overrunning its validity, or extending), and
// appends to the Redis list soak:log what the library told it, in the order it happened (records
// in soak_common.hpp). The orchestrator SIGKILLs it at random moments.
// Usage: soak_holder PORT
#include <signal.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "ports.hpp"
#include "resplock/core/lock.hpp"
#include "resplock/ports/posix.h"
#include "soak_common.hpp"

namespace {

using resplock::Connection;
using resplock::ConnectionConfig;
using resplock::Lock;
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
    char buf[512];
    Connection conn;

    Client(std::uint16_t server_port, std::uint32_t timeout_ms)
        : port(support::posix_port(ctx)),
          config(make_config(server_port, timeout_ms)),
          conn(port, config, buf, sizeof buf) {}

    static ConnectionConfig make_config(std::uint16_t server_port, std::uint32_t timeout_ms) {
        ConnectionConfig c;
        c.port = server_port;
        c.timeout_ms = timeout_ms;
        return c;
    }
};

// The log has its own connection, so a record never waits behind a lock call.
Client* log_client = nullptr;
long my_pid = 0;

// Appends one record. A holder that cannot log stops (exit 3): an unlogged hold cannot be checked.
__attribute__((format(printf, 1, 2))) void log_record(const char* format, ...) {
    char line[256];
    va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (n < 0 || static_cast<std::size_t>(n) >= sizeof line) {
        std::fprintf(stderr, "soak_holder: record too long\n");
        std::exit(3);
    }
    const std::string_view cmd[3] = {"RPUSH", soak::log_key, {line, static_cast<std::size_t>(n)}};
    resplock::resp::Reply reply;
    const Status s = log_client->conn.command(cmd, 3, reply);
    if (s != Status::ok) {
        std::fprintf(stderr, "soak_holder: RPUSH failed: %s\n", resplock::to_string(s));
        std::exit(3);
    }
}

// Holds an acquired lock for a while, then releases it. Every record is written before the
// holder acts on what it says (R before release), so a kill never leaves the log claiming less
// than the holder relied on.
void hold(Lock& lock, const char* key, std::uint32_t ttl_ms, bool contended) {
    const std::int64_t start = soak::boot_us();
    std::int64_t valid_until = valid_until_us(lock);
    // A copy: a failed extend or the release forgets the lock's token.
    char tok[resplock::max_token_len];
    const int len = static_cast<int>(lock.token().copy(tok, sizeof tok));
    log_record("A %ld %s %.*s %lld %lld %u %d", my_pid, key, len, tok,
               static_cast<long long>(start), static_cast<long long>(valid_until), ttl_ms,
               contended ? 1 : 0);

    // 40 %: done well within the TTL; 20 %: works past it without extending (the lock lapses);
    // 40 %: works up to three TTLs, extending when a third of the validity is left.
    const std::uint32_t plan = uniform(0, 4);
    const bool extending = plan >= 3;
    const std::uint32_t work_ms = plan <= 1   ? uniform(0, ttl_ms * 9 / 10)
                                  : plan == 2 ? uniform(ttl_ms, ttl_ms * 3 / 2)
                                              : uniform(ttl_ms, ttl_ms * 3);
    const std::int64_t work_end = start + static_cast<std::int64_t>(work_ms) * 1000;
    for (;;) {
        // Time first: a positive remaining_ms() read after it proves the lock valid at `now`.
        const std::int64_t now = soak::boot_us();
        const std::uint32_t left = lock.remaining_ms();
        if (left == 0) {
            log_record("L %ld %s %.*s lapsed", my_pid, key, len, tok);
            break;
        }
        if (stop_requested || now >= work_end) {
            log_record("R %ld %s %.*s %lld", my_pid, key, len, tok, static_cast<long long>(now));
            break;
        }
        if (extending && left < ttl_ms / 3) {
            const std::uint32_t new_ttl = uniform(soak::min_ttl_ms, soak::max_ttl_ms);
            const Status s = lock.extend(new_ttl);
            if (s != Status::ok) {
                log_record("L %ld %s %.*s extend:%d", my_pid, key, len, tok, static_cast<int>(s));
                break;
            }
            ttl_ms = new_ttl;
            valid_until = valid_until_us(lock);
            log_record("E %ld %s %.*s %lld", my_pid, key, len, tok,
                       static_cast<long long>(valid_until));
            continue;
        }
        sleep_ms(uniform(5, 40));  // a step of "work"
    }
    const Status s = lock.release();
    log_record("X %ld %s %.*s %d", my_pid, key, len, tok, static_cast<int>(s));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: soak_holder PORT\n");
        return 64;
    }
    const auto server_port = static_cast<std::uint16_t>(std::atoi(argv[1]));
    my_pid = static_cast<long>(getpid());
    rng.seed(static_cast<std::uint32_t>(my_pid) ^ static_cast<std::uint32_t>(soak::boot_us()));

    struct sigaction sa {};
    sa.sa_handler = on_sigterm;  // no SA_RESTART: a sleeping holder wakes up to stop
    sigaction(SIGTERM, &sa, nullptr);

    Client log(server_port, 5000);
    log_client = &log;
    Client locks(server_port, 2000);
    log_record("S %ld", my_pid);  // from here on, SIGTERM means "release and exit"

    while (!stop_requested) {
        const char* key = soak::keys[uniform(0, soak::key_count - 1)];
        const std::uint32_t ttl_ms = uniform(soak::min_ttl_ms, soak::max_ttl_ms);
        Lock lock(locks.conn, key);
        // One plain attempt first, so the log can tell a wait that ended in success.
        bool contended = false;
        Status s = lock.acquire(ttl_ms);
        if (s == Status::busy) {
            contended = true;
            s = lock.try_acquire(ttl_ms, uniform(100, 500));
        }
        if (s == Status::ok) {
            hold(lock, key, ttl_ms, contended);
        } else if (s == Status::busy) {
            log_record("B %ld %s", my_pid, key);
        } else {
            // The server may have set the key (reply lost): log the token, then remove it.
            const std::string_view tok = lock.token();
            const bool has_token = !tok.empty();
            log_record("U %ld %s %.*s %d", my_pid, key,
                       has_token ? static_cast<int>(tok.size()) : 1, has_token ? tok.data() : "-",
                       static_cast<int>(s));
            if (has_token) (void)lock.release();
            sleep_ms(20);
        }
    }
    return 0;
}
