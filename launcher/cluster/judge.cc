// The judge: what the one judging launcher writes for everyone (judge.h): the reports of lost
// launchers, the admission of newcomers, the verdict on the root cause.
#include "launcher/cluster/judge.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <utility>

#include "launcher/cluster/cluster_link_detail.h"
#include "launcher/supervise/job_failure.h"

namespace paddle::launcher {

using namespace cluster_link_detail;

Judge::Judge(store::ControlStore& store, JudgeSettings settings, std::function<Clock::time_point()> now)
    : store_(store), settings_(std::move(settings)), now_(std::move(now)) {}

std::string Judge::key(int generation, const std::string& suffix) const {
  return cluster_link_detail::generation_key(settings_.job_id, generation, suffix);
}

void Judge::begin(int generation) {
  generation_ = generation;
  reports_.clear();
  first_report_.reset();
  done_.clear();
}

void Judge::heard(const store::ControlStore::Entry& report) {
  reports_[report.key] = report;
  // The settle time counts from the first report's arrival, not from the next round.
  if (!first_report_) first_report_ = now_();
}

void Judge::round(int generation, const std::vector<RankedNode>& members) {
  if (generation != generation_) begin(generation);
  const bool someone_silent = liveness(generation, members);
  if (settings_.elastic) newcomers(generation, members);
  root_cause(generation, someone_silent);
}

bool Judge::liveness(int generation, const std::vector<RankedNode>& members) {
  std::vector<std::string> ips;
  std::unordered_map<std::string, const RankedNode*> others;  // by ip
  for (const auto& m : members)
    if (m.node.ip != settings_.node_ip) {
      ips.push_back(m.node.ip);
      others.emplace(m.node.ip, &m);
    }
  auto done = [&](const std::string& ip) {
    if (done_.count(ip)) return true;
    if (!store_.get(key(generation, "done." + ip))) return false;
    done_.insert(ip);
    return true;
  };
  // Whether one may be gone before the store says so. Asked every round, and before gone(): a
  // node that is silent now and gone a moment later is caught by one of the two. Etcd's store
  // measures silence from one look to the next; the master's answers from memory. One silent
  // node that has not finished is enough: under load thousands may be silent at once, and a
  // question each would make the round O(nodes).
  bool someone_silent = false;
  for (const auto& ip : store_.silent(2 * settings_.heartbeat_interval))
    if (others.count(ip) && !done(ip)) {
      someone_silent = true;
      break;
    }
  // One question for all: the store keeps who is gone, so a round costs the lost, not the nodes.
  for (const auto& [ip, why] : store_.gone(ips)) {
    // A node writes its done key before it exits and its connection closes: a finished node is
    // done, not lost (seen once: a node that finished first was named the job's root cause).
    const std::string report_key = key(generation, "report." + ip);
    if (reports_.count(report_key) || done(ip)) continue;  // reported already, or finished
    const auto it = others.find(ip);
    if (it == others.end()) continue;  // gone() names only the ips it was given
    const RankedNode* m = it->second;
    JobFailure lost;
    lost.cause = JobFailure::Cause::kLauncherLost;
    lost.node_rank = m->node_rank;
    lost.ip = ip;
    lost.hostname = m->node.hostname;
    lost.what = why;
    // Written once: its revision orders it among the reports, when the watch brings it; the
    // verdict of this very round counts it already.
    const std::string written = store_.add_if_absent(report_key, lost.to_json().dump());
    heard({report_key, written, std::numeric_limits<int64_t>::max()});
  }
  return someone_silent;
}

void Judge::newcomers(int generation, const std::vector<RankedNode>& members) {
  if (static_cast<int>(members.size()) >= settings_.nnodes) return;
  const std::string prefix = key(generation + 1, "node.");
  for (const auto& e : store_.range(prefix)) {
    const NodeRegistration newcomer = NodeRegistration::from_json(e.value);
    if (std::any_of(members.begin(), members.end(), [&](const RankedNode& m) { return m.node.ip == newcomer.ip; })) continue;
    JobFailure joined;
    joined.cause = JobFailure::Cause::kNodeJoined;
    joined.ip = newcomer.ip;
    joined.hostname = newcomer.hostname;
    joined.what = fmt::format("joined the job; generation {} admits it ({} node(s) now)", generation + 1, members.size() + 1);
    joined.exit_status = 0;
    store_.add_if_absent(key(generation, "report." + newcomer.ip), joined.to_json().dump());
    return;
  }
}

void Judge::root_cause(int generation, bool someone_silent) {
  if (reports_.empty()) return;
  if (!first_report_) first_report_ = now_();
  if (now_() - *first_report_ < settings_.settle_time) return;
  // A process that lost its peer fails at once; the launcher of that peer, killed or cut off,
  // is only counted gone dead_after later. Its silence holds the verdict until then.
  if (someone_silent && now_() - *first_report_ < settings_.settle_time + settings_.dead_after) return;
  std::optional<std::pair<std::pair<int, int64_t>, JobFailure>> best;  // ((cause, order), report)
  std::optional<std::pair<int64_t, JobFailure>> earliest, hang;
  for (const auto& [key, r] : reports_) {
    JobFailure f = JobFailure::from_json(r.value);
    const std::pair<int, int64_t> rank{static_cast<int>(f.cause), r.order};
    if (!earliest || r.order < earliest->first) earliest.emplace(r.order, f);
    if (f.cause == JobFailure::Cause::kProcessHung && (!hang || r.order < hang->first)) hang.emplace(r.order, f);
    if (!best || rank < best->first) best.emplace(rank, std::move(f));
  }
  // A hung job is stopped on every node as its verdict arrives: processes that fail then, their
  // peers gone, are the stop's doing, not the cause.
  if (hang && (best->second.cause == JobFailure::Cause::kProcessFailed ||
               best->second.cause == JobFailure::Cause::kProcessSignalled))
    best->second = hang->second;
  // A joining node stops the generation on purpose: processes that fail as they are stopped
  // report after it, and are not the cause.
  if (earliest->second.cause == JobFailure::Cause::kNodeJoined && best->second.cause != JobFailure::Cause::kLauncherLost)
    best->second = earliest->second;
  store_.add_if_absent(key(generation, "failed"), best->second.to_json().dump());
}

}  // namespace paddle::launcher
