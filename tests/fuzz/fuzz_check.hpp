// Invariant checks for the fuzz targets: a violated one aborts with a message, so libFuzzer saves
// the input and the replay tests fail, in any build (asserts may be compiled out).
#ifndef RESPLOCK_TESTS_FUZZ_CHECK_HPP
#define RESPLOCK_TESTS_FUZZ_CHECK_HPP

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                                      \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
            std::abort();                                                                     \
        }                                                                                     \
    } while (0)

#endif  // RESPLOCK_TESTS_FUZZ_CHECK_HPP
