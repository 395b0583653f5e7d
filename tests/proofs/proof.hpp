// What the bounded proofs share: marking bytes unreadable for AddressSanitizer (so that a call
// given len bytes of a longer buffer faults on any byte past len, exactly as if its buffer ended
// there), and the line each proof prints: its bound, how many cases it ran, how long it took.
// Outside an ASan build the marks do nothing, and over-reads are left to the ASan stage of
// scripts/test.sh, which runs the same proofs.
#ifndef RESPLOCK_TESTS_PROOF_HPP
#define RESPLOCK_TESTS_PROOF_HPP

#include <chrono>
#include <cstddef>
#include <cstdio>

#if defined(__SANITIZE_ADDRESS__)
#define RESPLOCK_PROOF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RESPLOCK_PROOF_ASAN 1
#endif
#endif

#ifdef RESPLOCK_PROOF_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace proof {

#ifdef RESPLOCK_PROOF_ASAN
inline constexpr bool asan = true;
// Any access to p[0..n) faults until allow(). ASan tracks 8-byte granules: a region that starts
// inside one is marked exactly only when it runs to the end of its allocation (the only way
// these proofs use it: the tail of a heap buffer).
inline void forbid(const void* p, std::size_t n) {
    if (n != 0) ASAN_POISON_MEMORY_REGION(p, n);
}
inline void allow(const void* p, std::size_t n) {
    if (n != 0) ASAN_UNPOISON_MEMORY_REGION(p, n);
}
#else
inline constexpr bool asan = false;
inline void forbid(const void*, std::size_t) {}
inline void allow(const void*, std::size_t) {}
#endif

class Timer {
  public:
    double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

  private:
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// One line per proof: "proof NAME: BOUND; CASES cases; T s".
inline void report(const char* name, const char* bound, unsigned long long cases,
                   const Timer& timer) {
    std::printf("  proof %s: %s; %llu cases; %.2f s%s\n", name, bound, cases, timer.seconds(),
                asan ? " (under AddressSanitizer)" : "");
    std::fflush(stdout);
}

}  // namespace proof

#endif  // RESPLOCK_TESTS_PROOF_HPP
