// What a call writes on stdout and stderr, captured in-process (the tool's units print with the C
// library's stdio). Shared by the tests of tests/cli.
#ifndef RESPLOCK_TESTS_CLI_CAPTURE_HPP
#define RESPLOCK_TESTS_CLI_CAPTURE_HPP

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace cli_test {

struct Output {
    std::string out;
    std::string err;
};

inline std::string read_all(std::FILE* f) {
    std::string text;
    std::rewind(f);
    char chunk[4096];
    std::size_t n = 0;
    while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0)
        text.append(chunk, n);
    std::fclose(f);
    return text;
}

// Runs fn() with stdout and stderr sent to temporary files, and returns what it wrote there.
template <class F>
Output capture(F&& fn) {
    std::fflush(stdout);
    std::fflush(stderr);
    std::FILE* out = std::tmpfile();
    std::FILE* err = std::tmpfile();
    const int saved_out = dup(STDOUT_FILENO);
    const int saved_err = dup(STDERR_FILENO);
    if (out == nullptr || err == nullptr || saved_out < 0 || saved_err < 0) {
        std::printf("    capture: cannot redirect stdout/stderr\n");
        std::abort();
    }
    dup2(fileno(out), STDOUT_FILENO);
    dup2(fileno(err), STDERR_FILENO);
    fn();
    std::fflush(stdout);
    std::fflush(stderr);
    dup2(saved_out, STDOUT_FILENO);
    dup2(saved_err, STDERR_FILENO);
    close(saved_out);
    close(saved_err);
    return {read_all(out), read_all(err)};
}

// One line on stderr, "resplock: ...\n", as every message of the tool.
inline bool one_message(const std::string& err) {
    return err.rfind("resplock: ", 0) == 0 && !err.empty() && err.back() == '\n' &&
           err.find('\n') == err.size() - 1;
}

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace cli_test

#endif  // RESPLOCK_TESTS_CLI_CAPTURE_HPP
