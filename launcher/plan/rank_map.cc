#include "launcher/plan/rank_map.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "common/checksum.h"
#include "common/error.h"

namespace paddle::launcher {
namespace {

// Dotted quads compare by their numbers, so 10.0.0.9 comes before 10.0.0.10.
std::vector<int> address_key(const std::string& ip) {
  std::vector<int> parts;
  size_t start = 0;
  while (start <= ip.size()) {
    const size_t dot = std::min(ip.find('.', start), ip.size());
    parts.push_back(std::atoi(ip.substr(start, dot - start).c_str()));
    start = dot + 1;
  }
  return parts;
}

std::string describe(const NodeRegistration& n) { return fmt::format("{} ({})", n.ip, n.hostname); }

}  // namespace

nlohmann::json NodeRegistration::to_json() const {
  nlohmann::json j = {{"ip", ip}, {"hostname", hostname}, {"endpoints", endpoints}, {"devices", devices},
                      {"max_restarts", max_restarts}, {"restarts_used", restarts_used},
                      {"servers", server_endpoints}, {"ps_store_port", ps_store_port},
                      {"tcp_store", tcp_store}, {"job_lists", job_lists}, {"order", order}};
  j["rank"] = requested_rank ? nlohmann::json(*requested_rank) : nlohmann::json();
  return j;
}

NodeRegistration NodeRegistration::from_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw common::PeerError(fmt::format("a node's registration at the master is malformed ({}): {}", e.what(), text));
  }
  return from_parsed(j);
}

NodeRegistration NodeRegistration::from_parsed(const nlohmann::json& j) {
  try {
    NodeRegistration n;
    n.ip = j.at("ip");
    n.hostname = j.at("hostname");
    n.endpoints = j.at("endpoints").get<std::vector<std::string>>();
    n.devices = j.at("devices");
    n.max_restarts = j.at("max_restarts");
    n.restarts_used = j.value("restarts_used", 0);
    n.server_endpoints = j.value("servers", std::vector<std::string>{});
    n.ps_store_port = j.value("ps_store_port", 0);
    n.tcp_store = j.value("tcp_store", "");
    n.job_lists = j.value("job_lists", "");
    n.order = j.value("order", "");
    if (!j.at("rank").is_null()) n.requested_rank = j.at("rank").get<int>();
    return n;
  } catch (const std::exception& e) {
    throw common::PeerError(fmt::format("a node's registration at the master is malformed ({}): {}", e.what(), j.dump()));
  }
}

std::string job_lists_summary(const std::string& lists) {
  constexpr size_t kWhole = 160;
  if (lists.size() <= kWhole) return lists;
  return fmt::format("{}... ({} characters, CRC-32 {:08x})", lists.substr(0, 100), lists.size(), common::crc32(lists));
}

std::vector<RankedNode> rank_nodes(std::vector<NodeRegistration> nodes, const std::vector<std::string>& ips_order) {
  const int count = static_cast<int>(nodes.size());
  std::map<int, const NodeRegistration*> claimed;
  const bool sort_ip = nodes.front().order == "sort_ip";
  for (const auto& n : nodes) {
    if ((n.order == "sort_ip") != sort_ip)
      throw common::UsageError(fmt::format("--sort_ip: node {} says {}, node {} says {}; give every node the same",
                                           describe(nodes.front()), sort_ip ? "True" : "False", describe(n),
                                           sort_ip ? "False" : "True"));
    if (n.max_restarts != nodes.front().max_restarts)
      throw common::UsageError(fmt::format("--max_restarts: node {} says {}, node {} says {}; give every node the same",
                                           describe(nodes.front()), nodes.front().max_restarts, describe(n), n.max_restarts));
    if (n.job_lists != nodes.front().job_lists)
      throw common::UsageError(fmt::format("the nodes were given different lists: node {} has {}, node {} has {}; give "
                                           "every node the same --ips, --servers, --workers, --start_port and --http_port",
                                           describe(nodes.front()), nodes.front().job_lists, describe(n), n.job_lists));
    if (!n.requested_rank) continue;
    if (*n.requested_rank >= count)
      throw common::UsageError(fmt::format("--rank: node {} asks for rank {}, but the job has {} nodes",
                                           describe(n), *n.requested_rank, count));
    auto [it, fresh] = claimed.emplace(*n.requested_rank, &n);
    if (!fresh)
      throw common::UsageError(fmt::format("--rank: nodes {} and {} both claim rank {}", describe(*it->second),
                                           describe(n), *n.requested_rank));
  }
  // Each node's sort key, once: --ips has one entry per node, so looking a node up in it per
  // comparison would cost O(N^2 log N).
  std::unordered_map<std::string, size_t> listed_at;
  for (size_t i = 0; i < ips_order.size(); ++i) listed_at.emplace(ips_order[i], i);
  using Key = std::tuple<size_t, bool, std::vector<int>>;  // listed at, not the master's host, address
  std::vector<std::pair<Key, const NodeRegistration*>> unranked;
  for (const auto& n : nodes)
    if (!n.requested_rank) {
      const auto listed = listed_at.find(n.ip);
      if (sort_ip) unranked.push_back({{0, false, address_key(n.ip)}, &n});
      else
        unranked.push_back({{listed == listed_at.end() ? ips_order.size() : listed->second, n.order != "master",
                             address_key(n.ip)},
                            &n});
    }
  std::sort(unranked.begin(), unranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<RankedNode> ranked;
  auto next_unranked = unranked.begin();
  int global = 0;
  for (int rank = 0; rank < count; ++rank) {
    auto it = claimed.find(rank);
    const NodeRegistration& n = it != claimed.end() ? *it->second : *(next_unranked++)->second;
    ranked.push_back({rank, global, n});
    global += static_cast<int>(n.endpoints.size());
  }
  return ranked;
}

std::string rank_map_text(const std::vector<RankedNode>& nodes, std::optional<int> shown_around) {
  constexpr int kHead = 4, kTail = 2;
  const int count = static_cast<int>(nodes.size());
  const bool whole = !shown_around || count <= kRankMapConsoleNodes;
  std::string text;
  bool gap = false;
  for (const auto& r : nodes) {
    if (!whole && r.node_rank >= kHead && r.node_rank < count - kTail && r.node_rank != *shown_around) {
      if (!gap) text += fmt::format("... ({} nodes in all; log/endpoints.log lists every one)\n", count);
      gap = true;
      continue;
    }
    gap = false;
    const int last = r.first_global_rank + static_cast<int>(r.node.endpoints.size()) - 1;
    const std::string ranks = r.node.endpoints.empty() ? "no ranks" : fmt::format("ranks {}-{}", r.first_global_rank, last);
    text += fmt::format("node {}  {} ({})  {} process(es)  {}  devices {}{}\n", r.node_rank, r.node.ip,
                        r.node.hostname, r.node.endpoints.size(), ranks, r.node.devices.empty() ? "cpu" : r.node.devices,
                        r.node.server_endpoints.empty() ? "" : fmt::format("  {} server(s)", r.node.server_endpoints.size()));
  }
  return text;
}

}  // namespace paddle::launcher
