// resplock as a user's build takes it in, each program run against a real redis-server:
// - tag install: `cmake --install` of this build tree into a temporary prefix, then a small
//   program (C++ API and C API twins) built against that prefix only, once through
//   find_package(resplock) (also from a C-only project) and once through pkg-config (also
//   --static, and a fully static program);
// - tag subdirectory: a C-only project that takes the source tree in with add_subdirectory;
// - tag fetchcontent: a project that takes it in with FetchContent.
// The temporary directory is removed at the end, pass or fail.
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "process.hpp"
#include "redis_server.hpp"

#if !defined(RESPLOCK_CMAKE) || !defined(RESPLOCK_BINARY_DIR) || !defined(RESPLOCK_SOURCE_DIR) || \
    !defined(RESPLOCK_CXX) || !defined(RESPLOCK_PKG_CONFIG) ||                                    \
    !defined(RESPLOCK_TOP_SOURCE_DIR) || !defined(RESPLOCK_LIBDIR) || !defined(RESPLOCK_PORTS) || \
    !defined(RESPLOCK_VERSION) || !defined(RESPLOCK_GENERATOR) || !defined(RESPLOCK_CC)
#error "tests/package/CMakeLists.txt passes the build's tools and paths as definitions"
#endif

namespace fs = std::filesystem;

namespace {

using support::Result;

// Configures and builds take their time on a loaded machine.
Result run(const std::vector<std::string>& args, const support::Env& env = {}) {
    return support::run(args, env, 180);
}

// Prints a failed command's output so the CTest log shows why.
bool ok(const Result& r, const char* what) {
    if (r.code == 0) return true;
    std::printf("    %s failed (exit %d):\n%s%s\n", what, r.code, r.out.c_str(), r.err.c_str());
    return false;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    std::stringstream in(s);
    std::string part;
    while (std::getline(in, part, sep))
        if (!part.empty()) parts.push_back(part);
    return parts;
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// What the consumer prints when the lock behaves: held, refused to a second holder, released.
const char* const expected_output =
    "status_str: lock is held by someone else\n"
    "acquire: ok\n"
    "held: yes\n"
    "second: lock is held by someone else\n"
    "release: ok\n"
    "second again: ok\n"
    "release: ok\n";

// The temporary prefix and build directories; removed when the tests end, pass or fail.
struct Scratch {
    fs::path root;
    fs::path prefix;
    bool installed = false;

    Scratch() {
        // Outside the build tree, so the checks below can tell build-tree paths apart.
        std::error_code ec;
        std::string tmpl = (fs::temp_directory_path(ec) / "resplock-package.XXXXXX").string();
        if (mkdtemp(tmpl.data()) != nullptr) {
            root = tmpl;
            prefix = root / "prefix";
        }
    }
    ~Scratch() {
        std::error_code ec;
        if (!root.empty()) fs::remove_all(root, ec);
    }
};

Scratch& scratch() {
    static Scratch s;
    return s;
}

support::RedisServer& server() {
    static support::RedisServer s;
    return s;
}

TEST_TAGGED(install_into_a_temporary_prefix, "install") {
    Scratch& s = scratch();
    REQUIRE(!s.root.empty());
    const Result r =
        run({RESPLOCK_CMAKE, "--install", RESPLOCK_BINARY_DIR, "--prefix", s.prefix.string()});
    REQUIRE(ok(r, "cmake --install"));
    s.installed = true;

    const fs::path lib = s.prefix / RESPLOCK_LIBDIR;
    const std::vector<fs::path> expected = {
        s.prefix / "include/resplock/core/lock.hpp",
        s.prefix / "include/resplock/core/connection.hpp",
        s.prefix / "include/resplock/core/status.h",
        s.prefix / "include/resplock/core/port.h",
        s.prefix / "include/resplock/core/config.h",
        s.prefix / "include/resplock/variants/quorum_lock.hpp",
        s.prefix / "include/resplock/c_api/lock.h",
        s.prefix / "include/resplock/version.h",
        lib / "libresplock.a",
        lib / "cmake/resplock/resplock-config.cmake",
        lib / "cmake/resplock/resplock-config-version.cmake",
        lib / "cmake/resplock/resplock-targets.cmake",
        lib / "pkgconfig/resplock.pc",
    };
    for (const fs::path& p : expected)
        if (!CHECK(fs::exists(p))) std::printf("      missing: %s\n", p.c_str());
    for (const std::string& port : split(RESPLOCK_PORTS, ',')) {
        for (const fs::path& p : {s.prefix / "include/resplock/ports" / (port + ".h"),
                                  lib / ("libresplock_" + port + ".a"),
                                  lib / ("cmake/resplock/resplock-" + port + "-targets.cmake"),
                                  lib / ("pkgconfig/resplock-" + port + ".pc")})
            if (!CHECK(fs::exists(p))) std::printf("      missing: %s\n", p.c_str());
    }
    // Every public header of the source tree, at the same place under include/resplock/.
    const fs::path headers = fs::path(RESPLOCK_TOP_SOURCE_DIR) / "include";
    for (const auto& entry : fs::recursive_directory_iterator(headers / "resplock")) {
        const fs::path rel = fs::relative(entry.path(), headers);
        if (!entry.is_regular_file() || rel.filename().string().rfind("mock.h", 0) == 0) continue;
        if (!CHECK(fs::exists(s.prefix / "include" / rel)))
            std::printf("      not installed: %s\n", rel.c_str());
    }
    // The mock port is for tests only; nothing lands beside include/resplock/.
    CHECK(!fs::exists(s.prefix / "include/resplock/ports/mock.hpp"));
    CHECK(!fs::exists(s.prefix / "include/resplock/ports/mock.h"));
    for (const auto& entry : fs::directory_iterator(s.prefix / "include"))
        CHECK_EQ(entry.path().filename().string(), std::string("resplock"));
    CHECK(!fs::exists(lib / "libresplock_mock.a"));

#ifdef RESPLOCK_WITH_CLI
    const Result v = run({(s.prefix / "bin/resplock").string(), "--version"});
    CHECK(ok(v, "installed resplock --version"));
    // With the tool: its man page and completions (docs/cli.md, "Installing"; package.install_cli
    // checks them in detail, against `make install` too).
    for (const char* rel :
         {"share/man/man1/resplock.1.gz", "share/bash-completion/completions/resplock",
          "share/zsh/vendor-completions/_resplock", "share/doc/resplock/copyright"})
        if (!CHECK(fs::exists(s.prefix / rel))) std::printf("      missing: %s\n", rel);
#endif
}

TEST_TAGGED(find_package_consumer_builds_and_locks, "install") {
    Scratch& s = scratch();
    REQUIRE(s.installed);
    REQUIRE(server().running());
    const fs::path build = s.root / "cmake-consumer";
    std::vector<std::string> ports = split(RESPLOCK_PORTS, ',');
    std::string extra_ports;
    for (const std::string& p : ports)
        if (p != "posix") extra_ports += (extra_ports.empty() ? "" : ";") + p;

    const Result conf =
        run({RESPLOCK_CMAKE, "-S", std::string(RESPLOCK_SOURCE_DIR) + "/consumer", "-B",
             build.string(), "-G", RESPLOCK_GENERATOR, "-DCMAKE_CXX_COMPILER=" RESPLOCK_CXX,
             "-DCMAKE_C_COMPILER=" RESPLOCK_CC, "-DCMAKE_PREFIX_PATH=" + s.prefix.string(),
             "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
             "-DCONSUMER_EXTRA_PORTS=" + extra_ports});
    REQUIRE(ok(conf, "consumer configure"));
    // The package must come from the temporary prefix, not from anywhere else on the machine.
    const std::string cache = read_file(build / "CMakeCache.txt");
    CHECK(cache.find("resplock_DIR:PATH=" + (s.prefix / RESPLOCK_LIBDIR).string() +
                     "/cmake/resplock") != std::string::npos);

    const Result b = run({RESPLOCK_CMAKE, "--build", build.string()});
    REQUIRE(ok(b, "consumer build"));
    // Only installed headers: no include path into this source tree or build tree.
    const std::string commands = read_file(build / "compile_commands.json");
    CHECK(!commands.empty());
    for (const char* flag : {"-I", "-isystem "}) {
        for (const char* tree : {RESPLOCK_TOP_SOURCE_DIR, RESPLOCK_BINARY_DIR})
            if (!CHECK(commands.find(flag + std::string(tree)) == std::string::npos))
                std::printf("      consumer compiles with %s%s...\n", flag, tree);
    }
    CHECK(commands.find(s.prefix.string() + "/include") != std::string::npos);

    for (const char* exe : {"consumer", "consumer_c"}) {
        const std::string key = std::string("package:find_package:") + exe;
        const Result r = run({(build / exe).string(), std::to_string(server().port()), key});
        CHECK_EQ(r.code, 0);
        if (!CHECK_EQ(r.out, std::string(expected_output))) std::printf("      (%s)\n", exe);
        CHECK_EQ(server().cli({"EXISTS", key}), std::string("0"));
    }
}

TEST_TAGGED(find_package_in_a_c_only_project_builds_and_locks, "install") {
    Scratch& s = scratch();
    REQUIRE(s.installed);
    REQUIRE(server().running());
    const fs::path build = s.root / "cmake-consumer-c";
    const Result conf =
        run({RESPLOCK_CMAKE, "-S", std::string(RESPLOCK_SOURCE_DIR) + "/consumer_c", "-B",
             build.string(), "-G", RESPLOCK_GENERATOR, "-DCMAKE_C_COMPILER=" RESPLOCK_CC,
             "-DCMAKE_PREFIX_PATH=" + s.prefix.string(), "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF"});
    REQUIRE(ok(conf, "C-only consumer configure"));
    const Result b = run({RESPLOCK_CMAKE, "--build", build.string()});
    REQUIRE(ok(b, "C-only consumer build"));
    const std::string key = "package:find_package:c_only";
    const Result r = run({(build / "consumer_c").string(), std::to_string(server().port()), key});
    CHECK_EQ(r.code, 0);
    CHECK_EQ(r.out, std::string(expected_output));
    CHECK_EQ(server().cli({"EXISTS", key}), std::string("0"));
}

TEST_TAGGED(pkg_config_consumer_builds_and_locks, "install") {
    Scratch& s = scratch();
    REQUIRE(s.installed);
    REQUIRE(server().running());
    const std::vector<std::pair<std::string, std::string>> env = {
        {"PKG_CONFIG_PATH", (s.prefix / RESPLOCK_LIBDIR / "pkgconfig").string()}};

    const Result version = run({RESPLOCK_PKG_CONFIG, "--modversion", "resplock"}, env);
    REQUIRE(ok(version, "pkg-config --modversion resplock"));
    CHECK_EQ(version.out, std::string(RESPLOCK_VERSION "\n"));

    const Result flags = run({RESPLOCK_PKG_CONFIG, "--cflags", "--libs", "resplock-posix"}, env);
    REQUIRE(ok(flags, "pkg-config resplock-posix"));
    CHECK(flags.out.find("-lresplock_posix") != std::string::npos);
    CHECK(flags.out.find(std::string(RESPLOCK_TOP_SOURCE_DIR) + "/") == std::string::npos);

    // Exactly as a user types it, through the shell's command substitution: the C++ program
    // with the C++ compiler, the C one with the C compiler (the library needs no C++ runtime).
    const struct {
        const char* name;
        const char* compiler;
        const char* std;
        const char* source;
    } builds[] = {{"pkg-config-consumer", RESPLOCK_CXX, "-std=c++17", "main.cpp"},
                  {"pkg-config-consumer-c", RESPLOCK_CC, "-std=c99", "main.c"}};
    for (const auto& b : builds) {
        const fs::path exe = s.root / b.name;
        const std::string cmd = std::string(b.compiler) + " " + b.std + " -o '" + exe.string() +
                                "' '" + RESPLOCK_SOURCE_DIR + "/consumer/" + b.source + "' $(" +
                                RESPLOCK_PKG_CONFIG + " --cflags --libs resplock-posix)";
        const Result built = run({"/bin/sh", "-c", "set -e; " + cmd}, env);
        if (!CHECK(ok(built, b.name))) continue;

        const std::string key = std::string("package:") + b.name;
        const Result r = run({exe.string(), std::to_string(server().port()), key});
        CHECK_EQ(r.code, 0);
        if (!CHECK_EQ(r.out, std::string(expected_output))) std::printf("      (%s)\n", b.name);
        CHECK_EQ(server().cli({"EXISTS", key}), std::string("0"));
    }

    // With --static: what a program linked only against static libraries needs. The C consumer,
    // linked with -static, so nothing but archives and the C library's own go into it.
    const fs::path static_exe = s.root / "pkg-config-consumer-static";
    const std::string static_cmd = std::string(RESPLOCK_CC) + " -std=c99 -static -o '" +
                                   static_exe.string() + "' '" + RESPLOCK_SOURCE_DIR +
                                   "/consumer/main.c' $(" + RESPLOCK_PKG_CONFIG +
                                   " --static --cflags --libs resplock-posix)";
    const Result static_built = run({"/bin/sh", "-c", "set -e; " + static_cmd}, env);
    if (CHECK(ok(static_built, "static C consumer"))) {
        const Result file = run({"/bin/sh", "-c", "LC_ALL=C ldd '" + static_exe.string() + "'"});
        CHECK(file.out.find("not a dynamic executable") != std::string::npos ||
              file.err.find("not a dynamic executable") != std::string::npos);
        const std::string key = "package:pkg-config-static";
        const Result r = run({static_exe.string(), std::to_string(server().port()), key});
        CHECK_EQ(r.code, 0);
        CHECK_EQ(r.out, std::string(expected_output));
        CHECK_EQ(server().cli({"EXISTS", key}), std::string("0"));
    }

    // Every other port's .pc gives flags under which its header compiles and its libraries link,
    // with and without --static.
    for (const std::string& port : split(RESPLOCK_PORTS, ',')) {
        if (port == "posix") continue;
        const fs::path src = s.root / ("port_" + port + ".cpp");
        // As in consumer/CMakeLists.txt: referencing the port's entry point makes the linker
        // need the port's own dependencies.
        std::ofstream(src) << "#include \"resplock/ports/" << port << ".h\"\n"
                           << "int main() {\n"
                           << "    auto* volatile entry = &resplock_" << port << "_port_init;\n"
                           << "    return entry != nullptr ? 0 : 1;\n"
                           << "}\n";
        for (const char* mode : {"", "--static "}) {
            const std::string port_cmd = std::string(RESPLOCK_CXX) + " -std=c++17 -o '" +
                                         (s.root / ("port_" + port)).string() + "' '" +
                                         src.string() + "' $(" + RESPLOCK_PKG_CONFIG + " " + mode +
                                         "--cflags --libs resplock-" + port + ")";
            const Result pb = run({"/bin/sh", "-c", "set -e; " + port_cmd}, env);
            if (!CHECK(ok(pb, "port header and libraries through pkg-config")))
                std::printf("      port: %s %s\n", mode, port.c_str());
        }
    }
}

// The resplock:: targets a build from this source tree must give on this machine: the same as
// the installed package's.
std::string expected_targets() {
    std::string targets = "resplock::resplock";
    for (const std::string& port : split(RESPLOCK_PORTS, ','))
        targets += ";resplock::" + port;
    return targets;
}

// Configures and builds tests/package/<project> (a project that takes this source tree in), then
// runs each of its programs against the server.
void parent_project_builds_and_locks(const std::string& project,
                                     const std::vector<std::string>& programs) {
    Scratch& s = scratch();
    REQUIRE(!s.root.empty());
    REQUIRE(server().running());
    const fs::path build = s.root / project;
    const Result conf =
        run({RESPLOCK_CMAKE, "-S", std::string(RESPLOCK_SOURCE_DIR) + "/" + project, "-B",
             build.string(), "-G", RESPLOCK_GENERATOR, "-DCMAKE_CXX_COMPILER=" RESPLOCK_CXX,
             "-DCMAKE_C_COMPILER=" RESPLOCK_CC, "-DRESPLOCK_SOURCE_DIR=" RESPLOCK_TOP_SOURCE_DIR,
             "-DFETCHCONTENT_FULLY_DISCONNECTED=ON", "-DEXPECTED_TARGETS=" + expected_targets()});
    REQUIRE(ok(conf, (project + " configure").c_str()));
    // Each expected target was checked by name (parent_checks.cmake), and said so.
    for (const std::string& target : split(expected_targets(), ';'))
        if (!CHECK(conf.out.find("parent: " + target + " -> ") != std::string::npos))
            std::printf("      not checked: %s\n", target.c_str());

    const Result b = run({RESPLOCK_CMAKE, "--build", build.string(), "-j", "2"});
    REQUIRE(ok(b, (project + " build").c_str()));
    // The tool did not come with the libraries (it would be built at the top of the build tree).
    CHECK(!fs::is_regular_file(build / "resplock"));

    for (const std::string& exe : programs) {
        const std::string key = "package:" + project + ":" + exe;
        const Result r = run({(build / exe).string(), std::to_string(server().port()), key});
        CHECK_EQ(r.code, 0);
        if (!CHECK_EQ(r.out, std::string(expected_output)))
            std::printf("      (%s)\n", exe.c_str());
        CHECK_EQ(server().cli({"EXISTS", key}), std::string("0"));
    }
}

TEST_TAGGED(c_project_add_subdirectory_builds_and_locks, "subdirectory") {
    parent_project_builds_and_locks("subdirectory", {"consumer_c"});
}

TEST_TAGGED(fetchcontent_project_builds_and_locks, "fetchcontent") {
    parent_project_builds_and_locks("fetchcontent", {"consumer", "consumer_c"});
}

}  // namespace
