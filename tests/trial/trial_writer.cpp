// The COMMAND of the trial's `resplock run` clients: work protected by the lock that resplock
// holds for it. Reads the token and the fencing number resplock gives it, announces the session
// to the resource (A, with 0 for the times and the TTL, which the writer does not know), then
// writes to it (W) every 5-20 ms for MS milliseconds.
// Usage: trial_writer PATH MS TAG
//   PATH: the resource's Unix socket; MS: how long to write; TAG: the client's name (no spaces).
//   Environment: RESPLOCK_TOKEN (required), RESPLOCK_FENCE (0 when unset: no --fence).
// Exit: 0 done; 75 the resource refused a write (a stale fencing number: the work stops at
// once); 3 the resource cannot be reached, closed the socket or answered something else; 64
// usage. SIGTERM (from resplock, when the lock is lost) has its default action: it dies at once.
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "resource_client.hpp"

namespace {

constexpr int exit_done = 0;
constexpr int exit_resource = 3;
constexpr int exit_usage = 64;
constexpr int exit_refused = 75;

int usage(const char* why) {
    (void)std::fprintf(stderr, "trial_writer: %s (usage: trial_writer PATH MS TAG)\n", why);
    return exit_usage;
}

bool has_space(const char* s) {
    return std::strpbrk(s, " \t\r\n") != nullptr;
}

void sleep_ms(unsigned ms) {
    const timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
    (void)nanosleep(&ts, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) return usage("expected 3 arguments");
    const char* path = argv[1];
    std::uint64_t ms = 0;
    if (!trial::parse_u64(argv[2], ms) || ms > 86400000U) return usage("MS: expected milliseconds");
    const char* tag = argv[3];
    if (*tag == '\0' || has_space(tag)) return usage("TAG: expected a word");
    const char* token = std::getenv("RESPLOCK_TOKEN");
    if (token == nullptr || *token == '\0' || has_space(token))
        return usage("RESPLOCK_TOKEN is not set (run under `resplock run`)");
    std::uint64_t fence = 0;
    const char* fence_text = std::getenv("RESPLOCK_FENCE");
    if (fence_text != nullptr && !trial::parse_u64(fence_text, fence))
        return usage("RESPLOCK_FENCE is not a number");

    trial::ResourceClient resource;
    if (!resource.connect(path)) {
        (void)std::fprintf(stderr, "trial_writer: cannot reach the resource at %s: %s\n", path,
                           std::strerror(errno));
        return exit_resource;
    }
    std::string reply;
    const std::string announce =
        std::string("A ") + token + " " + std::to_string(fence) + " 0 0 0 " + tag;
    if (!resource.request(announce, reply)) {
        (void)std::fprintf(stderr, "trial_writer: the resource is gone\n");
        return exit_resource;
    }
    if (reply != "ok") {
        (void)std::fprintf(stderr, "trial_writer: unexpected reply to A: %s\n", reply.c_str());
        return exit_resource;
    }

    std::mt19937 rng(static_cast<std::uint32_t>(trial::boot_us()) ^
                     static_cast<std::uint32_t>(getpid()));
    std::uniform_int_distribution<unsigned> pause(5, 20);
    const std::string write = std::string("W ") + token + " " + std::to_string(fence);
    const std::int64_t end = trial::boot_us() + static_cast<std::int64_t>(ms) * 1000;
    while (trial::boot_us() < end) {
        if (!resource.request(write, reply)) {
            (void)std::fprintf(stderr, "trial_writer: the resource is gone\n");
            return exit_resource;
        }
        if (reply == "refused") return exit_refused;
        if (reply != "ok") {
            (void)std::fprintf(stderr, "trial_writer: unexpected reply to W: %s\n", reply.c_str());
            return exit_resource;
        }
        sleep_ms(pause(rng));
    }
    return exit_done;
}
