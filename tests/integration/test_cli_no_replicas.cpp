// `resplock` against a master short of replicas (min-replicas-to-write 1, no replica attached),
// which refuses every write with -NOREPLICAS: acquire, --wait, --fence, --fair, --limit and run
// exit 69 (a temporary state, like -CLUSTERDOWN), retry within --wait, say the server refused the
// write and never that the lock may have been taken; a refusal lifted during the wait lets the
// acquisition and the release through. The refusal is lifted once the server has counted a
// refusal of the tool's request (INFO errorstats), never after a fixed sleep.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.hpp"
#include "helpers.hpp"
#include "process.hpp"
#include "redis_server.hpp"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

namespace {

support::RedisServer& master() {
    static support::RedisServer s{"--min-replicas-to-write", "1"};
    return s;
}

void refuse_writes(bool refuse) {
    CHECK(master().cli({"CONFIG", "SET", "min-replicas-to-write", refuse ? "1" : "0"}) == "OK");
}

// How many writes the server has refused with NOREPLICAS.
long long refusals() {
    const std::string stats = master().cli({"INFO", "errorstats"});
    const std::string field = "errorstat_NOREPLICAS:count=";
    const std::size_t at = stats.find(field);
    return at == std::string::npos ? 0 : std::atoll(stats.c_str() + at + field.size());
}

std::vector<std::string> tool(const std::vector<std::string>& args) {
    std::vector<std::string> all{RESPLOCK_CLI, "-u", master().url()};
    all.insert(all.end(), args.begin(), args.end());
    return all;
}

support::Result cli(const std::vector<std::string>& args) {
    return support::run(tool(args), {}, 30);
}

bool has(const std::string& text, const char* part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST(every_acquisition_refused_exits_69_and_says_the_write_was_refused) {
    refuse_writes(true);
    struct Case {
        std::vector<std::string> args;
        double wait_s;
    };
    const std::vector<Case> cases = {
        {{"acquire", "cli-norep"}, 0},
        {{"--wait", "1000", "acquire", "cli-norep"}, 1},
        {{"--fence", "acquire", "cli-norep"}, 0},
        {{"--fence", "--wait", "1000", "acquire", "cli-norep"}, 1},
        {{"--fair", "acquire", "cli-norep"}, 0},
        {{"--fair", "--wait", "1000", "acquire", "cli-norep"}, 1},
        {{"--limit", "2", "acquire", "cli-norep"}, 0},
        {{"--limit", "2", "--wait", "1000", "acquire", "cli-norep"}, 1},
        {{"--limit", "2", "--fair", "--wait", "1000", "acquire", "cli-norep"}, 1},
        {{"run", "cli-norep", "--", "true"}, 0},
        {{"--wait", "1000", "run", "cli-norep", "--", "true"}, 1},
    };
    for (const Case& c : cases) {
        const support::Result r = cli(c.args);
        std::printf("    exit %d after %.2f s: %s", r.code, r.secs, r.err.c_str());
        CHECK_EQ(r.code, 69);
        CHECK(has(r.err, "NOREPLICAS"));
        CHECK(has(r.err, "write refused"));
        CHECK(!has(r.err, "may have been taken"));
        CHECK(!has(r.err, "expires by its TTL"));
        CHECK(r.secs >= c.wait_s * 0.95);  // --wait was spent retrying
        CHECK(master().cli({"EXISTS", "cli-norep"}) == "0");
    }
    refuse_writes(false);
}

TEST(a_refusal_lifted_during_the_wait_lets_the_acquisition_through) {
    const std::vector<std::vector<std::string>> kinds = {{}, {"--fair"}, {"--limit", "2"}};
    for (const std::vector<std::string>& kind : kinds) {
        refuse_writes(true);
        const long long before = refusals();
        std::vector<std::string> acquire = kind;
        acquire.insert(acquire.end(), {"--wait", "10000", "acquire", "cli-norep-lifted"});
        support::Process p;
        REQUIRE(p.start(tool(acquire)));
        CHECK(support::wait_until([&] { return refusals() > before; }, 10));
        refuse_writes(false);
        const support::Result r = p.wait();
        CHECK_EQ(r.code, 0);
        std::vector<std::string> release = kind;
        release.insert(release.end(),
                       {"release", "cli-norep-lifted", r.out.substr(0, r.out.find('\n'))});
        CHECK_EQ(cli(release).code, 0);
        CHECK(master().cli({"EXISTS", "cli-norep-lifted"}) == "0");
    }
}

TEST(a_release_refused_is_retried_until_the_refusal_is_lifted) {
    const support::Result a = cli({"acquire", "cli-norep-release"});
    REQUIRE_EQ(a.code, 0);
    const std::string token = a.out.substr(0, a.out.find('\n'));
    refuse_writes(true);
    const long long before = refusals();
    support::Process p;
    REQUIRE(p.start(tool({"release", "cli-norep-release", token})));
    CHECK(support::wait_until([&] { return refusals() > before; }, 10));
    refuse_writes(false);
    const support::Result r = p.wait();
    std::printf("    exit %d after %.2f s: %s", r.code, r.secs, r.err.c_str());
    CHECK_EQ(r.code, 0);
    CHECK(master().cli({"EXISTS", "cli-norep-release"}) == "0");
}

TEST(a_release_refused_for_longer_than_half_the_timeout_exits_69_and_keeps_the_key) {
    const support::Result a = cli({"acquire", "cli-norep-kept"});
    REQUIRE_EQ(a.code, 0);
    const std::string token = a.out.substr(0, a.out.find('\n'));
    refuse_writes(true);
    const long long before = refusals();
    const support::Result r = cli({"--timeout", "400", "release", "cli-norep-kept", token});
    std::printf("    exit %d after %.2f s: %s", r.code, r.secs, r.err.c_str());
    CHECK_EQ(r.code, 69);
    CHECK(has(r.err, "NOREPLICAS"));
    CHECK(refusals() - before >= 2);  // retried
    refuse_writes(false);
    CHECK(master().cli({"EXISTS", "cli-norep-kept"}) == "1");
    CHECK_EQ(cli({"release", "cli-norep-kept", token}).code, 0);
}
