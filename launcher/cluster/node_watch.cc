// ClusterLink, step two: the node's own watch, a background thread: heartbeats, the judge's
// round where this launcher judges, and the failures any node reported (cluster_link.h). It
// waits in the store's watch: the first report, and then the verdict, reach every node in the
// round trip the store answers at once, and a node that waits costs the store nothing per round.
#include "launcher/cluster/cluster_link.h"

#include <fmt/format.h>

#include <utility>

#include "launcher/cluster/cluster_link_detail.h"

namespace paddle::launcher {

using namespace cluster_link_detail;

namespace {

// The judge's round: how often it looks for lost launchers and whether the verdict is due.
constexpr auto kJudgeRound = std::chrono::milliseconds(250);
// The pause before asking again a store that did not answer.
constexpr auto kRetryPause = std::chrono::milliseconds(50);

}  // namespace

std::optional<JobFailure> ClusterLink::failure() {
  std::lock_guard lock(mutex_);
  return failure_;
}

std::optional<JobFailure> ClusterLink::wait_for_failure(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  verdict_wake_.wait_for(lock, wait, [&] { return failure_.has_value() || thread_.stop_requested(); });
  return failure_;
}

ControlPlaneFigures ClusterLink::figures() {
  ControlPlaneFigures figures;
  {
    std::lock_guard lock(mutex_);
    figures.nodes = members_->empty() ? settings_.nnodes : static_cast<int>(members_->size());
  }
  figures.heartbeats_missed = heartbeats_missed_.load();
  figures.store_requests = store_->requests_served();
  return figures;
}

void ClusterLink::share_hang(int generation, const std::string& findings) {
  store_->put(generation_key(generation, "hang.node." + settings_.node_ip), findings);
}

void ClusterLink::share_straggler(int generation, const StragglerNews& news) {
  uint64_t number;
  {
    std::lock_guard lock(mutex_);
    number = ++stragglers_shared_;
  }
  store_->put(generation_key(generation, fmt::format("straggler.node.{}.{}", settings_.node_ip, number)),
              nlohmann::json{{"line", news.line}, {"flagged", news.flagged}}.dump());
}

std::vector<StragglerNews> ClusterLink::straggler_news() {
  std::lock_guard lock(mutex_);
  return std::exchange(straggler_news_, {});
}

std::optional<nlohmann::json> ClusterLink::job_hang() {
  std::lock_guard lock(mutex_);
  return hang_.latest();
}

void ClusterLink::watch(const std::stop_token& stop) {
  auto reachable_at = Clock::now();  // the last time the store answered
  int watched_generation = -1;
  int64_t after = 0;  // the store's revision the watch of `watched_generation` has seen
  while (true) {
    int generation;
    std::shared_ptr<const std::vector<RankedNode>> members;
    bool failed, verdict_seen;
    {
      std::unique_lock lock(mutex_);
      if (stop.stop_requested()) return;
      generation = generation_;
      members = members_;
      failed = failure_.has_value();
      verdict_seen = verdict_seen_;
    }
    const bool watching = generation >= 0 && !verdict_seen;
    bool answered = false;
    try {
      store_->heartbeat();
      if (watching) {
        if (generation != watched_generation) {
          watched_generation = generation;
          after = 0;
          judge_.begin(generation);
          std::lock_guard lock(mutex_);
          hang_.begin();
        }
        after = watch_failures(generation, *members, failed, after);
      }
      reachable_at = Clock::now();
      answered = true;
      std::lock_guard lock(mutex_);
      store_answered_ = reachable_at;
    } catch (const common::PeerError& e) {
      ++heartbeats_missed_;
      if (dynamic_cast<const store::LeaseEnded*>(&e) != nullptr) {
        std::lock_guard lock(mutex_);
        if (!lease_ended_) lease_ended_ = e.what();
      }
      if (generation >= 0 && !failed && Clock::now() - reachable_at > settings_.dead_after) {
        std::lock_guard lock(mutex_);
        if (!failure_) {
          failure_ = master_lost(*members, e.what());
          failure_from_silence_ = true;
        }
      }
      verdict_wake_.notify_all();
    }
    // The watch itself waited; otherwise (nothing to watch, or the store did not answer) rest.
    if (watching && answered) continue;
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, watching ? kRetryPause : settings_.heartbeat_interval,
                   [&] { return stop.stop_requested() || generation_ != generation; });
  }
}

int64_t ClusterLink::watch_failures(int generation, const std::vector<RankedNode>& members, bool failed, int64_t after) {
  const std::string failed_key = generation_key(generation, "failed");
  const std::string report_prefix = generation_key(generation, "report.");
  const bool judges = store_->judges();
  if (judges) {
    // Held through the judge's round, not the watch after it: once stop_judging returns, no
    // judge is halfway through writing what the job's keys no longer say.
    std::lock_guard judging(judging_mutex_);
    bool current;
    {
      std::lock_guard lock(mutex_);
      current = generation_ == generation;  // not stopped (nor moved on) since the snapshot
    }
    if (current) judge_.round(generation, members);
  }
  // Once this node knows of a failure it waits only for the verdict; the judge reads every report.
  const std::string hang_verdict_key = generation_key(generation, "hang.verdict");
  const std::string hang_prefix = generation_key(generation, "hang.node.");
  const std::string straggler_prefix = generation_key(generation, "straggler.node.");
  const std::string own_stragglers = straggler_prefix + settings_.node_ip + ".";
  std::vector<std::string> prefixes{failed_key, hang_verdict_key};
  if (judges || !failed) prefixes.push_back(report_prefix);
  if (judges) {
    prefixes.push_back(hang_prefix);
    prefixes.push_back(straggler_prefix);
  }
  // A node that does not judge waits two heartbeats: the store counts a waiting request as
  // heard, and this node's own reports go at once on a connection of their own meanwhile.
  const store::ControlStore::Changes changes =
      store_->watch(prefixes, after, judges ? kJudgeRound : 2 * settings_.heartbeat_interval);
  std::optional<JobFailure> seen;
  bool is_verdict = false;
  const auto now = Clock::now();
  for (const auto& e : changes.entries) {
    if (e.key == hang_verdict_key) {
      std::lock_guard lock(mutex_);
      hang_.verdict_seen(e.value);
    } else if (e.key.starts_with(hang_prefix)) {
      std::lock_guard lock(mutex_);
      if (judges) hang_.heard(e, now);
    } else if (e.key.starts_with(straggler_prefix)) {
      const nlohmann::json news = nlohmann::json::parse(e.value, nullptr, false);
      if (judges && !e.key.starts_with(own_stragglers) && news.is_object() && news.contains("line")) {
        std::lock_guard lock(mutex_);
        straggler_news_.push_back({news.value("line", ""), news.value("flagged", false)});
      }
    } else if (e.key == failed_key) {
      seen = JobFailure::from_json(e.value);
      is_verdict = true;
    } else if (e.key.starts_with(report_prefix)) {
      if (judges) judge_.heard(e);
      if (!seen) seen = JobFailure::from_json(e.value);
    }
  }
  {
    std::lock_guard lock(mutex_);
    if (seen && generation_ == generation && (is_verdict || !failure_ || failure_from_silence_)) {
      failure_ = seen;
      failure_from_silence_ = false;
      verdict_seen_ = is_verdict;
    }
  }
  if (seen) verdict_wake_.notify_all();
  if (judges) {
    std::optional<std::string> hang_verdict;
    {
      std::lock_guard lock(mutex_);
      hang_verdict = hang_.due(members.size(), now);
    }
    if (hang_verdict) store_->put(hang_verdict_key, *hang_verdict);
  }
  return changes.revision;
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
