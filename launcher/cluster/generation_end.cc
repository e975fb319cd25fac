// ClusterLink, step three: a generation's end. This node reports why it ended here, reads the
// judge's verdict, and learns whether the job goes on to a next generation (a restart) or,
// when all succeeded, finishes (the keys: cluster_link.h).
#include "launcher/cluster/cluster_link.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <thread>
#include <unordered_set>

#include "common/wait.h"
#include "launcher/cluster/cluster_link_detail.h"

namespace paddle::launcher {

using namespace cluster_link_detail;

namespace {

// A request can fail for a moment; what is still failing after this is the store gone.
constexpr auto kRetryFor = std::chrono::seconds(2);
// How long one watch of the nodes' acks or done keys waits before the loop looks at the rest.
constexpr auto kWaitTurn = std::chrono::milliseconds(250);
// How often a wait that the watch wakes (the verdict) looks whether it was interrupted: thousands
// of nodes' waits each waking every 50 ms were 300,000 wakeups a second on one machine.
constexpr auto kInterruptLook = std::chrono::milliseconds(250);
// A process exiting with this asks for the job's restart (Paddle's elastic convention).
constexpr int kRestartMeExitStatus = 101;

}  // namespace

std::optional<std::string> ClusterLink::membership_change(const JobFailure& root) const {
  if (!settings_.elastic()) return std::nullopt;
  if (root.cause == JobFailure::Cause::kNodeJoined) return root.what;
  if (root.cause == JobFailure::Cause::kProcessFailed && root.exit_status == kRestartMeExitStatus)
    return fmt::format("{} asked for a restart (exit status {})", root.what, kRestartMeExitStatus);
  if (root.cause != JobFailure::Cause::kLauncherLost) return std::nullopt;
  std::lock_guard lock(mutex_);
  const int remaining = static_cast<int>(members_->size()) - 1;
  if (remaining < settings_.min_nodes) return std::nullopt;
  return fmt::format("node {} ({}) left; {} node(s) remain, at least the {} --nnodes asks for", root.node_rank, root.ip,
                     remaining, settings_.min_nodes);
}

JobFailure ClusterLink::report(int generation, const JobFailure& failure) {
  // A request can fail for a moment (a signal interrupts it); the store gone fails it for good.
  // A signalled launcher tries once: whoever signalled it (scancel, mpirun, a shell's kill of
  // every launcher) usually signals the master's node too, whose store may be gone already,
  // and this node must not hold its exit for it.
  const bool signalled = failure.cause == JobFailure::Cause::kLauncherSignalled;
  const auto give_up = Clock::now() + (signalled ? Clock::duration::zero() : kRetryFor);
  const std::string report_key = generation_key(generation, "report." + settings_.node_ip);
  common::retry_until<common::PeerError>(
      give_up, std::chrono::milliseconds(50),
      [&] {
        store_->put(report_key, failure.to_json().dump());
        return true;
      },
      [this] { return stop_requested(); });
  {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = failure;
  }
  verdict_wake_.notify_all();
  return failure;
}

bool ClusterLink::store_answers(int generation, Clock::time_point until) {
  return common::retry_until<common::PeerError>(
      until, std::chrono::milliseconds(100),
      [&] {
        store_->get(generation_key(generation, "failed"));
        return true;
      },
      [this] { return stop_requested(); });
}

JobFailure ClusterLink::verdict(int generation, const JobFailure& provisional, const std::function<bool()>& interrupted) {
  const bool master_gone = provisional.cause == JobFailure::Cause::kLauncherLost &&
                           provisional.ip == settings_.master_ip && settings_.etcd.empty();
  if (master_gone) return provisional;
  const auto deadline = Clock::now() + settings_.settle_time + 2 * settings_.dead_after;
  std::optional<JobFailure> root;
  bool store_gone = false;
  // The watch brings the verdict (node_watch.cc); this thread only waits for it. `interrupted`
  // runs the supervisor's signal handler, which may report() (a SIGTERM): never under mutex_.
  while (!root && !store_gone && Clock::now() < deadline && !interrupted()) {
    std::unique_lock lock(mutex_);
    if (verdict_seen_ && failure_) {
      root = failure_;
    } else if (Clock::now() - store_answered_ > settings_.dead_after) {
      // Silence this long may be this launcher's own (stopped, then continued): ask the store
      // itself, a request of its own rather than a heartbeat another may stand for, for a while.
      lock.unlock();
      const bool answered = store_answers(generation, std::min(deadline, Clock::now() + kRetryFor));
      lock.lock();
      if (answered) store_answered_ = Clock::now();
      else store_gone = true;  // no verdict comes
    } else {
      verdict_wake_.wait_until(lock, std::min(deadline, Clock::now() + kInterruptLook));
    }
  }
  // A failure here may be only the echo of the master's node going away (its ranks left the
  // collective): without the master's store no next generation can meet, so the lost master is
  // the root cause, and it ends the job instead of a restart that would wait for it.
  if (!root && store_gone && settings_.etcd.empty()) {
    JobFailure lost = master_lost(*members_now(), "no verdict came");
    lost.exit_status = provisional.exit_status;
    return lost;
  }
  if (!root) return provisional;
  const std::string acks = generation_key(generation, "ack.");
  try {
    store_->put(acks + settings_.node_ip, "1");
  } catch (const common::PeerError&) {
  }
  // The master's store must outlive the other nodes' reading of the verdict.
  if (store_->hosted_here()) {
    std::vector<std::string> waiting;
    {
      std::lock_guard lock(mutex_);
      for (const auto& m : *members_)
        if (!(m.node.ip == root->ip && root->cause == JobFailure::Cause::kLauncherLost)) waiting.push_back(m.node.ip);
    }
    wait_for_nodes(acks, waiting, Clock::now() + kRetryFor, interrupted);
  }
  return *root;
}

void ClusterLink::wait_for_nodes(const std::string& prefix, const std::vector<std::string>& waiting, Clock::time_point until,
                                 const std::function<bool()>& interrupted) {
  std::unordered_set<std::string> awaited(waiting.begin(), waiting.end());
  if (awaited.empty() || Clock::now() >= until || interrupted()) return;
  int64_t after = 0;
  common::retry_until<common::PeerError>(
      until, std::chrono::milliseconds(20),
      [&] {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
        const store::ControlStore::Changes changes =
            store_->watch({prefix}, after, std::clamp(left, std::chrono::milliseconds(0), kWaitTurn));
        after = changes.revision;
        for (const auto& ip : node_ips(changes.entries, prefix)) awaited.erase(ip);
        return awaited.empty();
      },
      interrupted);
}

std::optional<JobFailure> ClusterLink::finish(int generation) {
  const std::string prefix = generation_key(generation, "done.");
  try {
    store_->put(prefix + settings_.node_ip, "1");
  } catch (const common::PeerError& e) {
    // The done key decides (cluster_link.h): the master cannot end with success without it.
    if (auto f = failure()) return f;
    return master_lost(*members_now(), fmt::format("this node's done key could not reach it ({})", e.what()));
  }
  if (!store_->hosted_here()) {
    // Only the master's node waits for the others: its store must outlive their use of it.
    if (auto f = reported_failure(generation)) return f;
    stop_judging();
    if (!settings_.etcd.empty()) forget_job_if_all_done(prefix);
    return std::nullopt;
  }
  auto last_report = Clock::now();
  // The members not yet done: each done key arrives once through the watch and leaves the set,
  // so the wait is O(nodes) in all, and who is awaited is named only when shown.
  std::shared_ptr<const std::vector<RankedNode>> members;
  std::unordered_set<std::string> awaited;
  int64_t after = 0;
  // Who is awaited, named only when shown.
  const auto awaited_names = [&] {
    std::vector<std::string> names;
    for (const auto& m : *members)
      if (awaited.count(m.node.ip)) names.push_back(fmt::format("node {} ({})", m.node_rank, m.node.ip));
    return fmt::format("{}", fmt::join(names, ", "));
  };
  while (true) {
    if (auto f = failure()) return f;
    {
      std::lock_guard lock(mutex_);
      if (members != members_) {
        members = members_;
        awaited.clear();
        for (const auto& m : *members)
          if (m.node.ip != settings_.node_ip) awaited.insert(m.node.ip);  // its own key is written above
        after = 0;  // the done keys of the members anew
      }
    }
    if (awaited.empty()) {
      // A node reported before its done key came (the judge: one silent past dead_after, paused
      // rather than gone) fails the job, as that node finds too. None can come now: the judge
      // counts no done node lost.
      if (auto f = reported_failure(generation)) return f;
      stop_judging();
      return std::nullopt;
    }
    throw_if_stopped([&] { return fmt::format("keeping the master store up, this node done, until {} finish", awaited_names()); });
    try {
      const store::ControlStore::Changes changes = store_->watch({prefix}, after, kWaitTurn);
      after = changes.revision;
      for (const auto& ip : node_ips(changes.entries, prefix)) awaited.erase(ip);
    } catch (const common::PeerError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // our own store: asked again
    }
    if (Clock::now() - last_report >= settings_.report_interval && !awaited.empty()) {
      log_.info(fmt::format("this node is done; keeping the master store up until {} finish", awaited_names()));
      last_report = Clock::now();
    }
  }
}

std::optional<JobFailure> ClusterLink::reported_failure(int generation) {
  {
    std::lock_guard lock(mutex_);
    if (failure_ && !failure_from_silence_) return failure_;
  }
  try {
    const std::vector<store::ControlStore::Entry> reports = store_->range(generation_key(generation, "report."));
    if (!reports.empty()) return JobFailure::from_json(reports.front().value);
  } catch (const common::PeerError& e) {
    log_.info(fmt::format("this node is done and {} has its done key; it has ended since, as it may once every node's "
                          "is there ({})",
                          store_->describe(), e.what()));
  }
  return std::nullopt;
}

void ClusterLink::forget_job_if_all_done(const std::string& done_prefix) {
  // The last node done forgets the job where the store outlives it (etcd).
  try {
    const std::vector<std::string> listed = node_ips(store_->range(done_prefix), done_prefix);
    const std::unordered_set<std::string> done(listed.begin(), listed.end());
    std::lock_guard lock(mutex_);
    for (const auto& m : *members_)
      if (!done.count(m.node.ip)) return;
  } catch (const common::PeerError&) {
    return;
  }
  try {
    store_->remove_prefix(key(""));
  } catch (const common::PeerError&) {
  }
}

void ClusterLink::workers_done(int generation) {
  try {
    store_->put(generation_key(generation, "workers_done." + settings_.node_ip), "1");
  } catch (const common::PeerError&) {
    // The store gone is a failure the watcher reports.
  }
}

bool ClusterLink::job_workers_done(int generation) {
  const std::string prefix = generation_key(generation, "workers_done.");
  try {
    const std::vector<std::string> listed = node_ips(store_->range(prefix), prefix);
    const std::unordered_set<std::string> done(listed.begin(), listed.end());
    std::lock_guard lock(mutex_);
    return std::all_of(members_->begin(), members_->end(),
                       [&](const RankedNode& m) { return m.node.endpoints.empty() || done.count(m.node.ip); });
  } catch (const common::PeerError&) {
    return false;
  }
}

void ClusterLink::stop_judging() {
  // The job is over here: a finished node, and the keys the last one removes, must not be
  // judged lost (nor reported so, in a store that outlives the job).
  std::lock_guard judging(judging_mutex_);
  std::lock_guard lock(mutex_);
  generation_ = -1;
}

}  // namespace paddle::launcher
