// Runs every TEST() of the binary; an optional argument runs only tests whose name contains it.
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

int main(int argc, char** argv) {
    const char* filter = argc > 1 ? argv[1] : nullptr;
    int passed = 0;
    int failed = 0;
    for (check::Test* t = check::first; t != nullptr; t = t->next) {
        if (filter != nullptr && std::strstr(t->name, filter) == nullptr) continue;
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
