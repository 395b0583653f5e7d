// What every benchmark program needs: the monotonic clock its figures use, a sleep, a fatal
// error with the program's name, and a checked number from the command line.
#ifndef RESPLOCK_BENCH_BASICS_HPP
#define RESPLOCK_BENCH_BASICS_HPP

#include <time.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace bench {

// CLOCK_MONOTONIC in nanoseconds: the clock of every recorded time (Node's
// process.hrtime.bigint() reads the same one; bench/run.sh checks it).
inline std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline void sleep_ns(std::int64_t ns) {
    if (ns <= 0) return;
    timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

[[noreturn]] inline void fail(const std::string& what) {
    std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, what.c_str());
    std::exit(2);
}

// A non-negative decimal number, the whole of `text`; anything else is fatal ("bad WHAT").
inline long parse_long(const char* text, const char* what) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < 0) fail(std::string("bad ") + what);
    return v;
}

}  // namespace bench

#endif
