// `resplock list` against a real Redis Cluster on 127.0.0.1 (three masters with a replica each):
// locks on keys whose slots three different masters serve are all listed, each once (the
// replicas, which hold copies of them, are not scanned), whichever node the URL names, a replica
// included; a semaphore's companion keys are not listed; --json lines say the same; status
// --json reads a key through a node that does not serve it.
#include <string>
#include <vector>

#include "check.hpp"
#include "helpers.hpp"
#include "process.hpp"
#include "redis_cluster.hpp"

#ifndef RESPLOCK_CLI
#error "RESPLOCK_CLI must name the resplock binary"
#endif

namespace {

using support::RedisCluster;
using support::Result;

RedisCluster& cluster() {
    static RedisCluster c;
    return c;
}

Result cli(std::size_t node, std::vector<std::string> args) {
    args.insert(args.begin(), {RESPLOCK_CLI, "-u", cluster().node(node).url()});
    return support::run(args, {}, 30);
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        lines.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    return lines;
}

// How many lines of `out` start with `key` and a blank (list's rows) or hold "key":"KEY" (--json).
std::size_t rows_for(const std::string& out, const std::string& key) {
    std::size_t n = 0;
    for (const std::string& line : lines_of(out)) {
        if (line.rfind(key + " ", 0) == 0 ||
            line.find("\"key\":\"" + key + "\"") != std::string::npos)
            ++n;
    }
    return n;
}

}  // namespace

TEST(cluster_starts) {
    REQUIRE(cluster().ok());
    CHECK(cluster().healthy());
}

TEST(list_scans_every_master_once_from_any_node) {
    REQUIRE(cluster().ok());
    std::vector<std::string> keys;
    for (std::size_t m = 0; m < RedisCluster::master_count; ++m)
        keys.push_back(cluster().key_on(m, "inspect-" + std::to_string(m) + ":"));
    // Taken through node 0: the tool follows MOVED to each key's master.
    for (const std::string& key : keys)
        REQUIRE(cli(0, {"--owner", "lister", "acquire", key}).code == 0);
    const std::string sem = cluster().key_on(1, "inspect-sem:");
    REQUIRE(cli(0, {"--owner", "s", "--limit", "2", "--fence", "acquire", sem}).code == 0);
    // Node 3 is node 0's replica, node 5 node 2's: a URL may name any node.
    for (const std::size_t node :
         {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{5}}) {
        for (const bool json : {false, true}) {
            std::vector<std::string> args = {"list", "inspect-*"};
            if (json) args.push_back("--json");
            const Result r = cli(node, args);
            CHECK_EQ(r.code, 0);
            CHECK(r.err.empty());
            for (const std::string& key : keys)
                CHECK_EQ(rows_for(r.out, key), std::size_t{1});
            CHECK_EQ(rows_for(r.out, sem), std::size_t{1});
            CHECK(r.out.find(":fence") == std::string::npos);
            CHECK_EQ(lines_of(r.out).size(), std::size_t{json ? 4U : 5U});
            if (r.code != 0 || lines_of(r.out).size() != (json ? 4U : 5U))
                std::printf("      node %zu: %s%s", node, r.out.c_str(), r.err.c_str());
        }
    }
    // status --json through a node that does not serve the key: the read follows MOVED.
    const Result st = cli(0, {"status", "--json", keys[2]});
    CHECK_EQ(st.code, 0);
    CHECK(st.out.find("\"kind\":\"lock\",\"state\":\"held\"") != std::string::npos);
    CHECK(st.out.find("\"owner\":\"lister\"") != std::string::npos);
    // --max counts the locks of every master together.
    const Result capped = cli(1, {"list", "--max", "3", "inspect-*"});
    CHECK_EQ(capped.code, 0);
    CHECK_EQ(lines_of(capped.out).size(), std::size_t{4});
    CHECK(capped.err.find("stopped after 3 locks") != std::string::npos);
}
