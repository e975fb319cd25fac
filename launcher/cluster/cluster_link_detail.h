#pragma once
// What the parts of ClusterLink share (cluster_link.cc, rendezvous.cc, judge.cc, node_watch.cc,
// generation_end.cc); nothing outside launcher/cluster/ includes it.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "store/control_store.h"

namespace paddle::launcher::cluster_link_detail {

using Clock = std::chrono::steady_clock;

// JOB.gG.SUFFIX: a key of one generation of job JOB (the keys: cluster_link.h).
inline std::string generation_key(const std::string& job_id, int generation, const std::string& suffix) {
  return fmt::format("{}.g{}.{}", job_id, generation, suffix);
}

inline std::string seconds(std::chrono::milliseconds ms) { return fmt::format("{:.3g} s", ms.count() / 1000.0); }

// The IPs of `entries`, keys of the form `prefix` + IP.
inline std::vector<std::string> node_ips(const std::vector<store::ControlStore::Entry>& entries, const std::string& prefix) {
  std::vector<std::string> ips;
  for (const auto& e : entries) ips.push_back(e.key.substr(prefix.size()));
  return ips;
}

}  // namespace paddle::launcher::cluster_link_detail
