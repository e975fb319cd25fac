// ClusterLink, the judge: what the one judging launcher writes for everyone (cluster_link.h):
// the reports of lost launchers, the admission of newcomers, the verdict on the root cause.
#include "launcher/cluster/cluster_link.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "launcher/cluster/cluster_link_detail.h"

namespace paddle::launcher {

using namespace cluster_link_detail;

bool ClusterLink::judge_liveness(int generation, const std::vector<RankedNode>& members) {
  bool someone_silent = false;
  for (const auto& m : members) {
    if (m.node.ip == settings_.node_ip || store_->get(generation_key(generation, "done." + m.node.ip))) continue;
    const std::optional<std::string> why = store_->gone(m.node.ip);
    if (!why) {
      someone_silent = someone_silent || store_->silence(m.node.ip) > 2 * settings_.heartbeat_interval;
      continue;
    }
    // A node writes its done key before it exits and its connection closes: one that finished
    // between the first look and gone() is done, not lost (seen once: a node that finished first
    // was named the job's root cause).
    if (store_->get(generation_key(generation, "done." + m.node.ip))) continue;
    JobFailure lost;
    lost.cause = JobFailure::Cause::kLauncherLost;
    lost.node_rank = m.node_rank;
    lost.ip = m.node.ip;
    lost.hostname = m.node.hostname;
    lost.what = *why;
    // Written once: its age orders it among the reports.
    store_->add_if_absent(generation_key(generation, "report." + m.node.ip), lost.to_json().dump());
  }
  return someone_silent;
}

void ClusterLink::judge_newcomers(int generation, const std::vector<RankedNode>& members) {
  if (static_cast<int>(members.size()) >= settings_.nnodes) return;
  const std::string prefix = generation_key(generation + 1, "node.");
  for (const auto& e : store_->range(prefix)) {
    const NodeRegistration newcomer = NodeRegistration::from_json(e.value);
    if (std::any_of(members.begin(), members.end(), [&](const RankedNode& m) { return m.node.ip == newcomer.ip; })) continue;
    JobFailure joined;
    joined.cause = JobFailure::Cause::kNodeJoined;
    joined.ip = newcomer.ip;
    joined.hostname = newcomer.hostname;
    joined.what = fmt::format("joined the job; generation {} admits it ({} node(s) now)", generation + 1, members.size() + 1);
    joined.exit_status = 0;
    store_->add_if_absent(generation_key(generation, "report." + newcomer.ip), joined.to_json().dump());
    return;
  }
}

void ClusterLink::judge_root_cause(int generation, bool someone_silent) {
  const std::vector<ControlStore::Entry> reports = store_->range(generation_key(generation, "report."));
  if (reports.empty()) return;
  if (!first_report_) first_report_ = Clock::now();
  if (Clock::now() - *first_report_ < settings_.settle_time) return;
  // A process that lost its peer fails at once; the launcher of that peer, killed or cut off,
  // is only counted gone dead_after later. Its silence holds the verdict until then.
  if (someone_silent && Clock::now() - *first_report_ < settings_.settle_time + settings_.dead_after) return;
  std::optional<std::pair<std::pair<int, int64_t>, JobFailure>> best;  // ((cause, order), report)
  std::optional<std::pair<int64_t, JobFailure>> earliest;
  for (const auto& r : reports) {
    JobFailure f = JobFailure::from_json(r.value);
    const std::pair<int, int64_t> rank{static_cast<int>(f.cause), r.order};
    if (!earliest || r.order < earliest->first) earliest.emplace(r.order, f);
    if (!best || rank < best->first) best.emplace(rank, std::move(f));
  }
  // A joining node stops the generation on purpose: processes that fail as they are stopped
  // report after it, and are not the cause.
  if (earliest->second.cause == JobFailure::Cause::kNodeJoined && best->second.cause != JobFailure::Cause::kLauncherLost)
    best->second = earliest->second;
  store_->add_if_absent(generation_key(generation, "failed"), best->second.to_json().dump());
}

}  // namespace paddle::launcher
