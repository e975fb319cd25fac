#include <doctest/doctest.h>

#include <algorithm>

#include "common/error.h"
#include "launcher/plan/rank_map.h"

using namespace paddle::launcher;
using paddle::common::UsageError;

namespace {

NodeRegistration node(std::string ip, int processes, std::optional<int> rank = std::nullopt, int max_restarts = 0) {
  NodeRegistration n;
  n.ip = ip;
  n.hostname = "host-" + ip;
  n.requested_rank = rank;
  n.max_restarts = max_restarts;
  for (int i = 0; i < processes; ++i) n.endpoints.push_back(ip + ":" + std::to_string(6070 + i));
  return n;
}

std::vector<std::string> order(const std::vector<RankedNode>& ranked) {
  std::vector<std::string> ips;
  for (const auto& r : ranked) ips.push_back(r.node.ip);
  return ips;
}

}  // namespace

TEST_CASE("node ranks: --rank first, then the order of --ips, then sorted IP; never arrival") {
  // Arrival order is deliberately scrambled.
  const auto by_ip = rank_nodes({node("10.0.0.10", 1), node("10.0.0.9", 1), node("10.0.0.2", 1)}, {});
  CHECK(order(by_ip) == std::vector<std::string>{"10.0.0.2", "10.0.0.9", "10.0.0.10"});
  const auto by_ips = rank_nodes({node("10.0.0.10", 1), node("10.0.0.9", 1), node("10.0.0.2", 1)},
                                 {"10.0.0.9", "10.0.0.10", "10.0.0.2"});
  CHECK(order(by_ips) == std::vector<std::string>{"10.0.0.9", "10.0.0.10", "10.0.0.2"});
  const auto with_rank = rank_nodes({node("10.0.0.1", 2), node("10.0.0.2", 3, 0), node("10.0.0.3", 1)}, {});
  CHECK(order(with_rank) == std::vector<std::string>{"10.0.0.2", "10.0.0.1", "10.0.0.3"});
  CHECK(with_rank[0].first_global_rank == 0);
  CHECK(with_rank[1].first_global_rank == 3);
  CHECK(with_rank[2].first_global_rank == 5);
  CHECK(rank_map_text(with_rank) ==
        "node 0  10.0.0.2 (host-10.0.0.2)  3 process(es)  ranks 0-2  devices cpu\n"
        "node 1  10.0.0.1 (host-10.0.0.1)  2 process(es)  ranks 3-4  devices cpu\n"
        "node 2  10.0.0.3 (host-10.0.0.3)  1 process(es)  ranks 5-5  devices cpu\n");
}

TEST_CASE("contradicting registrations are named") {
  CHECK_THROWS_WITH_AS(rank_nodes({node("10.0.0.1", 1, 1), node("10.0.0.2", 1, 1)}, {}),
                       doctest::Contains("nodes 10.0.0.1 (host-10.0.0.1) and 10.0.0.2 (host-10.0.0.2) both claim rank 1"),
                       UsageError);
  CHECK_THROWS_WITH_AS(rank_nodes({node("10.0.0.1", 1, 2), node("10.0.0.2", 1)}, {}),
                       doctest::Contains("asks for rank 2, but the job has 2 nodes"), UsageError);
  CHECK_THROWS_WITH_AS(rank_nodes({node("10.0.0.1", 1, std::nullopt, 1), node("10.0.0.2", 1, std::nullopt, 2)}, {}),
                       doctest::Contains("--max_restarts"), UsageError);
}

TEST_CASE("a registration round-trips through JSON and a malformed one is a peer error") {
  const NodeRegistration n = node("10.0.0.7", 2, 1, 3);
  const NodeRegistration back = NodeRegistration::from_json(n.to_json().dump());
  CHECK(back.ip == n.ip);
  CHECK(back.endpoints == n.endpoints);
  CHECK(back.requested_rank == 1);
  CHECK(back.max_restarts == 3);
  CHECK_THROWS_AS(NodeRegistration::from_json("{\"ip\": 1}"), paddle::common::PeerError);
}

TEST_CASE("the console's rank map of many nodes shows the first four, this node and the last two") {
  std::vector<RankedNode> nodes;
  for (int i = 0; i < 40; ++i) {
    RankedNode n;
    n.node_rank = i;
    n.first_global_rank = i;
    n.node.ip = "10.0.0." + std::to_string(i + 1);
    n.node.hostname = "h" + std::to_string(i);
    n.node.endpoints = {n.node.ip + ":6170"};
    nodes.push_back(n);
  }
  const std::string whole = rank_map_text(nodes);
  CHECK(std::count(whole.begin(), whole.end(), '\n') == 40);
  const std::string shown = rank_map_text(nodes, 20);
  CHECK(shown.find("node 3  10.0.0.4") != std::string::npos);
  CHECK(shown.find("node 4  ") == std::string::npos);
  CHECK(shown.find("node 20  10.0.0.21 (h20)") != std::string::npos);
  CHECK(shown.find("node 38  ") != std::string::npos);
  CHECK(shown.find("node 39  ") != std::string::npos);
  CHECK(shown.find("... (40 nodes in all; log/endpoints.log lists every one)") != std::string::npos);
  CHECK(std::count(shown.begin(), shown.end(), '\n') == 4 + 1 + 1 + 1 + 2);
  nodes.resize(kRankMapConsoleNodes);
  CHECK(rank_map_text(nodes, 3) == rank_map_text(nodes));  // a small map is shown whole
}

TEST_CASE("--ips of thousands of nodes orders them, and unlisted nodes come after in address order") {
  std::vector<std::string> ips_order;
  std::vector<NodeRegistration> nodes;
  for (int i = 0; i < 3000; ++i) {
    const std::string ip = "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1);
    ips_order.insert(ips_order.begin(), ip);  // --ips lists them backwards
    nodes.push_back(node(ip, 1));
  }
  nodes.push_back(node("10.9.0.2", 1));
  nodes.push_back(node("10.9.0.10", 1));
  const auto ranked = rank_nodes(nodes, ips_order);
  REQUIRE(ranked.size() == 3002);
  for (size_t i = 0; i < ips_order.size(); ++i) CHECK(ranked[i].node.ip == ips_order[i]);
  CHECK(ranked[3000].node.ip == "10.9.0.2");
  CHECK(ranked[3001].node.ip == "10.9.0.10");
  CHECK(ranked[3001].first_global_rank == 3001);
}

TEST_CASE("a registration's job lists stay short at thousands of nodes, and different lists stay different") {
  CHECK(job_lists_summary("--ips=10.0.0.1,10.0.0.2") == "--ips=10.0.0.1,10.0.0.2");
  std::string many = "--ips=";
  for (int i = 0; i < 4096; ++i) many += "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1) + ",";
  std::string other = many;
  other[other.size() - 2] = '7';  // the last address differs, far past the part the summary shows
  const std::string summary = job_lists_summary(many);
  CHECK(summary.size() < 160);
  CHECK(summary.starts_with("--ips=10.0.0.1,10.0.0.2,"));
  CHECK(summary.find(std::to_string(many.size()) + " characters") != std::string::npos);
  CHECK(summary == job_lists_summary(many));
  CHECK(summary != job_lists_summary(other));
  NodeRegistration a = node("10.0.0.1", 1), b = node("10.0.0.2", 1);
  a.job_lists = summary;
  b.job_lists = job_lists_summary(other);
  CHECK_THROWS_WITH_AS(rank_nodes({a, b}, {}), doctest::Contains("the nodes were given different lists"), UsageError);
}
