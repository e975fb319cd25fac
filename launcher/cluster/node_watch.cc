// ClusterLink, step two: the node's own watch, a background thread: heartbeats, the judge's
// round where this launcher judges, and the failures any node reported (cluster_link.h).
#include "launcher/cluster/cluster_link.h"

#include <fmt/format.h>

#include "launcher/cluster/cluster_link_detail.h"

namespace paddle::launcher {

using namespace cluster_link_detail;

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(250);

}  // namespace

std::optional<JobFailure> ClusterLink::failure() {
  std::lock_guard lock(mutex_);
  return failure_;
}

void ClusterLink::watch() {
  auto last_heartbeat = Clock::now() - settings_.heartbeat_interval;
  auto reachable_at = Clock::now();  // the last time the store answered
  bool first_round = true;
  while (true) {
    int generation;
    std::vector<RankedNode> members;
    bool failed, verdict_seen;
    {
      std::unique_lock lock(mutex_);
      if (!first_round && wake_.wait_for(lock, kPollInterval, [this] { return stop_; })) return;
      first_round = false;
      generation = generation_;
      members = members_;
      failed = failure_.has_value();
      verdict_seen = verdict_seen_;
    }
    try {
      if (Clock::now() - last_heartbeat >= settings_.heartbeat_interval) {
        store_->heartbeat();
        last_heartbeat = Clock::now();
      }
      if (generation >= 0 && !verdict_seen) {
        std::lock_guard judging(judging_mutex_);
        bool current;
        {
          std::lock_guard lock(mutex_);
          current = generation_ == generation;  // not stopped (nor moved on) since the snapshot
        }
        if (current) poll_failures(generation, members, failed);
      }
      reachable_at = Clock::now();
    } catch (const common::PeerError& e) {
      if (generation >= 0 && !failed && Clock::now() - reachable_at > settings_.dead_after) {
        std::lock_guard lock(mutex_);
        if (!failure_) failure_ = master_lost(members, e.what());
      }
    }
  }
}

void ClusterLink::poll_failures(int generation, const std::vector<RankedNode>& members, bool failed) {
  if (store_->judges()) {
    const bool someone_silent = judge_liveness(generation, members);
    if (settings_.elastic()) judge_newcomers(generation, members);
    judge_root_cause(generation, someone_silent);
  }
  std::optional<JobFailure> seen;
  bool is_verdict = false;
  if (auto text = store_->get(generation_key(generation, "failed"))) {
    seen = JobFailure::from_json(*text);
    is_verdict = true;
  } else if (!failed) {
    const std::vector<ControlStore::Entry> reports = store_->range(generation_key(generation, "report."));
    if (!reports.empty()) seen = JobFailure::from_json(reports.front().value);
  }
  std::lock_guard lock(mutex_);
  if (seen && generation_ == generation && (is_verdict || !failure_)) {
    failure_ = seen;
    verdict_seen_ = is_verdict;
  }
}

JobFailure ClusterLink::master_lost(const std::vector<RankedNode>& members, const std::string& why) const {
  JobFailure lost;
  lost.cause = JobFailure::Cause::kLauncherLost;
  if (settings_.etcd.empty()) {
    lost.ip = settings_.master_ip;
    lost.hostname = "the master";
    for (const auto& m : members)
      if (m.node.ip == settings_.master_ip) lost.node_rank = m.node_rank;
    lost.what = fmt::format("{} has been unreachable for {} (its launcher is gone, or this node is cut off from it)",
                            store_->describe(), seconds(settings_.dead_after));
  } else {
    lost.ip = settings_.node_ip;
    lost.hostname = "this node";
    for (const auto& m : members)
      if (m.node.ip == settings_.node_ip) lost.node_rank = m.node_rank;
    lost.what = fmt::format("this node lost {} for {}: {}", store_->describe(), seconds(settings_.dead_after), why);
  }
  return lost;
}

}  // namespace paddle::launcher
