// Runs every TEST() of the binary. An argument runs only the tests whose name contains it;
// --tag WORD runs only the tests tagged WORD (TEST_TAGGED); --case NAME only the test of that very
// name (one CTest test per case, tests/CMakeLists.txt). A run that ran no test fails.
#include <cstdio>
#include <cstring>

#include "check.hpp"

namespace check {
namespace {
Test* first = nullptr;
Test** last = &first;
int current_failures = 0;
}  // namespace

Registrar::Registrar(Test& t) noexcept {
    *last = &t;
    last = &t.next;
}

void fail(const char* file, int line, const char* what) {
    ++current_failures;
    std::printf("    %s:%d: check failed: %s\n", file, line, what);
}

bool failed() {
    return current_failures != 0;
}

}  // namespace check

namespace {

// Whether the space-separated list `tags` holds `word`.
bool tagged(const char* tags, const char* word) {
    const std::size_t n = std::strlen(word);
    for (const char* p = tags; p != nullptr && *p != '\0';) {
        const char* end = std::strchr(p, ' ');
        const std::size_t len = end != nullptr ? static_cast<std::size_t>(end - p) : std::strlen(p);
        if (len == n && std::strncmp(p, word, n) == 0) return true;
        p = end != nullptr ? end + 1 : nullptr;
    }
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    const bool by_tag = argc > 2 && std::strcmp(argv[1], "--tag") == 0;
    const bool by_name = argc > 2 && std::strcmp(argv[1], "--case") == 0;
    const char* filter = argc > 1 ? argv[by_tag || by_name ? 2 : 1] : nullptr;
    int passed = 0;
    int failed = 0;
    for (check::Test* t = check::first; t != nullptr; t = t->next) {
        if (by_tag && !tagged(t->tags, filter)) continue;
        if (by_name && std::strcmp(t->name, filter) != 0) continue;
        if (!by_tag && !by_name && filter != nullptr && std::strstr(t->name, filter) == nullptr) {
            continue;
        }
        check::current_failures = 0;
        std::printf("[ RUN  ] %s\n", t->name);
        std::fflush(stdout);
        t->fn();
        if (check::current_failures == 0) {
            ++passed;
            std::printf("[  OK  ] %s\n", t->name);
        } else {
            ++failed;
            std::printf("[ FAIL ] %s\n", t->name);
        }
        std::fflush(stdout);
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return (failed == 0 && passed > 0) ? 0 : 1;
}
