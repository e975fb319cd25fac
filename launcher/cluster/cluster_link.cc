#include "launcher/cluster/cluster_link.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "common/parse.h"
#include "launcher/cluster/etcd_store.h"
#include "launcher/cluster/master_store.h"

namespace paddle::launcher {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(250);
constexpr auto kRetryFor = std::chrono::seconds(2);
// An elastic node rewrites its registration each round: slower than a fixed job's polling.
constexpr auto kElasticRound = std::chrono::milliseconds(100);
// A process exiting with this asks for the job's restart (Paddle's elastic convention).
constexpr int kRestartMeExitStatus = 101;

std::string seconds(std::chrono::milliseconds ms) { return fmt::format("{:.3g} s", ms.count() / 1000.0); }

std::unique_ptr<ControlStore> open_store(const ClusterSettings& s) {
  if (!s.etcd.empty()) {
    try {
      return std::make_unique<EtcdStore>(s.etcd, s.job_id, s.node_ip, s.dead_after);
    } catch (const common::PeerError& e) {
      throw common::PeerError(fmt::format("--master=etcd://: {}", e.what()));
    }
  }
  try {
    return std::make_unique<MasterStore>(s.master_ip, s.master_port, s.host_master, s.job_id, s.node_ip, s.dead_after, s.token);
  } catch (const common::PeerError&) {
    throw;
  } catch (const std::exception& e) {
    throw common::UsageError(fmt::format("--master: this node ({}) hosts the master, but {}", s.node_ip, e.what()));
  }
}

std::vector<std::string> node_ips(const std::vector<ControlStore::Entry>& entries, const std::string& prefix) {
  std::vector<std::string> ips;
  for (const auto& e : entries) ips.push_back(e.key.substr(prefix.size()));
  return ips;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

std::string ClusterSettings::master_url() const {
  if (etcd.empty()) return fmt::format("{}:{}", master_ip, master_port);
  std::vector<std::string> names;
  for (const auto& e : etcd) names.push_back(e.to_string());
  return fmt::format("etcd://{}", fmt::join(names, ","));
}

std::string ClusterSettings::master_name() const {
  return etcd.empty() ? "the master " + master_url() : "etcd " + master_url().substr(std::string("etcd://").size());
}

ClusterLink::ClusterLink(ClusterSettings settings, LaunchLog& log)
    : settings_(std::move(settings)), log_(log), store_(open_store(settings_)) {
  if (store_->hosted_here())
    log_.info(fmt::format("hosting the job's master store on {}:{} (job {})", settings_.master_ip, settings_.master_port,
                          settings_.job_id));
  if (!settings_.etcd.empty()) clear_stale_state();
  thread_ = std::thread([this] { watch(); });
}

ClusterLink::~ClusterLink() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ClusterLink::clear_stale_state() {
  // Keys of this job id with no live launcher but this one are an earlier run's, which ended
  // without cleaning up (every launcher was killed): they would fail or confuse this run.
  const std::vector<std::string> alive = store_->alive_nodes();
  if (std::any_of(alive.begin(), alive.end(), [&](const std::string& ip) { return ip != settings_.node_ip; })) return;
  const std::string prefix = key("g");
  if (store_->range(prefix).empty()) return;
  store_->remove_prefix(prefix);
  store_->remove_prefix(key("generation"));
  log_.info(fmt::format("{}: removed the keys an earlier run of job {} left (no launcher of it is alive)",
                        store_->describe(), settings_.job_id));
}

JoinedGeneration ClusterLink::join(int generation, const NodeRegistration& me) {
  // A node is alive before it registers, so the judge can tell when it goes.
  try {
    store_->heartbeat();
  } catch (const common::PeerError&) {
    // Not reachable yet: the rendezvous waits for it and says so.
  }
  return settings_.elastic() ? join_elastic(generation, me) : join_fixed(generation, me);
}

void ClusterLink::check_rendezvous_time(Clock::time_point started, const std::string& status) {
  if (Clock::now() - started >= settings_.rendezvous_timeout)
    throw RendezvousTimeout(fmt::format("rendezvous of job {} at {} timed out after {}: {}", settings_.job_id,
                                        store_->describe(), seconds(settings_.rendezvous_timeout), status));
}

JoinedGeneration ClusterLink::join_fixed(int generation, const NodeRegistration& me) {
  const std::string prefix = generation_key(generation, "node.");
  const auto started = Clock::now();
  auto last_report = started;
  std::optional<Clock::time_point> reached;  // the last time the store answered
  while (true) {
    std::vector<ControlStore::Entry> registrations;
    std::string unreachable;
    try {
      // Registering is idempotent: a reply lost to a timeout is simply sent again.
      store_->put_while_alive(prefix + me.ip, me.to_json().dump());
      registrations = store_->range(prefix);
      // Alive (the master's presence connection held) before any worker starts, so that a
      // launcher killed right after is seen gone at once, not a heartbeat timeout later.
      if (static_cast<int>(registrations.size()) == settings_.nnodes) store_->heartbeat();
      reached = Clock::now();
    } catch (const common::PeerError&) {
      unreachable = fmt::format("{} is not reachable yet", store_->describe());
    }
    const std::vector<std::string> have = node_ips(registrations, prefix);
    if (reached && Clock::now() - *reached > settings_.dead_after)
      throw common::PeerError(fmt::format("{} went away during the rendezvous of job {} (its launcher exited or was "
                                          "killed: see its log)",
                                          store_->describe(), settings_.job_id));
    if (static_cast<int>(have.size()) > settings_.nnodes)
      throw common::UsageError(fmt::format("--nnodes={}: {} nodes registered with {}: {}", settings_.nnodes, have.size(),
                                           store_->describe(), fmt::join(have, ", ")));
    if (static_cast<int>(have.size()) == settings_.nnodes) {
      std::vector<NodeRegistration> nodes;
      for (const auto& e : registrations) nodes.push_back(NodeRegistration::from_json(e.value));
      return complete(generation, std::move(nodes), have);
    }
    const std::string status = rendezvous_status(have, unreachable);
    check_rendezvous_time(started, status);
    if (Clock::now() - last_report >= settings_.report_interval) {
      log_.info(status);
      last_report = Clock::now();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

JoinedGeneration ClusterLink::join_elastic(int generation, const NodeRegistration& me) {
  int target = generation;
  const auto started = Clock::now();
  auto last_report = started;
  std::optional<Clock::time_point> enough_since;  // MIN nodes were registered for `target`
  int announced_wait = -1;
  while (true) {
    std::string unreachable;
    std::vector<std::string> have;
    try {
      if (auto newest = store_->get(key("generation")))
        target = std::max(target, static_cast<int>(common::to_int(*newest).value_or(0)));
      const std::string prefix = generation_key(target, "node.");
      if (auto members = store_->get(generation_key(target, "members"))) {
        std::vector<NodeRegistration> nodes;
        std::vector<std::string> ips;
        for (const auto& j : nlohmann::json::parse(*members)) {
          nodes.push_back(NodeRegistration::from_json(j.dump()));
          ips.push_back(nodes.back().ip);
        }
        if (contains(ips, me.ip)) return complete(target, std::move(nodes), ips);
        if (announced_wait != target) {
          log_.info(fmt::format("generation {} of job {} runs with {} node(s) without this one; this node joins generation {}",
                                target, settings_.job_id, ips.size(), target + 1));
          announced_wait = target;
        }
        ++target;
        enough_since.reset();
        continue;
      }
      store_->put_while_alive(prefix + me.ip, me.to_json().dump());
      const std::vector<ControlStore::Entry> registrations = store_->range(prefix);
      have = node_ips(registrations, prefix);
      if (static_cast<int>(have.size()) >= settings_.min_nodes && !enough_since) enough_since = Clock::now();
      if (static_cast<int>(have.size()) < settings_.min_nodes) enough_since.reset();
      if (may_start(target, have, enough_since)) {
        close_generation(target, registrations);
        continue;
      }
    } catch (const common::PeerError& e) {
      unreachable = e.what();
    }
    const std::string status = rendezvous_status(have, unreachable);
    check_rendezvous_time(started, status);
    if (Clock::now() - last_report >= settings_.report_interval) {
      log_.info(fmt::format("generation {}: {}", target, status));
      last_report = Clock::now();
    }
    std::this_thread::sleep_for(kElasticRound);
  }
}

bool ClusterLink::may_start(int generation, const std::vector<std::string>& have,
                            std::optional<Clock::time_point> enough_since) {
  const int count = static_cast<int>(have.size());
  if (count < settings_.min_nodes) return false;
  if (count >= settings_.nnodes) return true;
  if (enough_since && Clock::now() - *enough_since >= settings_.elastic_timeout) return true;
  if (generation == 0) return false;  // the first generation gives latecomers elastic_timeout
  const std::vector<std::string> alive = store_->alive_nodes();
  return std::all_of(alive.begin(), alive.end(), [&](const std::string& ip) { return contains(have, ip); });
}

void ClusterLink::close_generation(int generation, const std::vector<ControlStore::Entry>& registrations) {
  std::vector<NodeRegistration> nodes;
  for (const auto& e : registrations) nodes.push_back(NodeRegistration::from_json(e.value));
  std::vector<std::string> earlier;
  if (auto members = store_->get(generation_key(generation - 1, "members")))
    for (const auto& j : nlohmann::json::parse(*members)) earlier.push_back(j.at("ip").get<std::string>());
  std::vector<RankedNode> ranked = rank_nodes(std::move(nodes), settings_.ips_order);
  std::stable_partition(ranked.begin(), ranked.end(), [&](const RankedNode& n) { return contains(earlier, n.node.ip); });
  if (static_cast<int>(ranked.size()) > settings_.nnodes) ranked.resize(settings_.nnodes);
  nlohmann::json members = nlohmann::json::array();
  for (const auto& n : ranked) members.push_back(n.node.to_json());
  store_->add_if_absent(generation_key(generation, "members"), members.dump());
  store_->put(key("generation"), std::to_string(generation));
}

JoinedGeneration ClusterLink::complete(int generation, std::vector<NodeRegistration> nodes,
                                       const std::vector<std::string>& have) {
  int restarts_used = 0;
  for (const auto& n : nodes) restarts_used = std::max(restarts_used, n.restarts_used);
  std::vector<RankedNode> ranked;
  try {
    ranked = rank_nodes(std::move(nodes), settings_.ips_order);
  } catch (const common::UsageError&) {
    // Every node finds the same contradiction; the master's store stays up until they have.
    refuse(generation, have);
    throw;
  }
  std::lock_guard lock(mutex_);
  generation_ = generation;
  members_ = ranked;
  failure_.reset();
  verdict_seen_ = false;
  first_report_.reset();
  return {generation, restarts_used, ranked};
}

std::optional<std::string> ClusterLink::membership_change(const JobFailure& root) const {
  if (!settings_.elastic()) return std::nullopt;
  if (root.cause == JobFailure::Cause::kNodeJoined) return root.what;
  if (root.cause == JobFailure::Cause::kProcessFailed && root.exit_status == kRestartMeExitStatus)
    return fmt::format("{} asked for a restart (exit status {})", root.what, kRestartMeExitStatus);
  if (root.cause != JobFailure::Cause::kLauncherLost) return std::nullopt;
  std::lock_guard lock(mutex_);
  const int remaining = static_cast<int>(members_.size()) - 1;
  if (remaining < settings_.min_nodes) return std::nullopt;
  return fmt::format("node {} ({}) left; {} node(s) remain, at least the {} --nnodes asks for", root.node_rank, root.ip,
                     remaining, settings_.min_nodes);
}

std::string ClusterLink::rendezvous_status(const std::vector<std::string>& have, const std::string& unreachable) const {
  const int waiting = std::max(settings_.min_nodes - static_cast<int>(have.size()), 0);
  std::vector<std::string> missing;
  for (const auto& ip : settings_.ips_order)
    if (!contains(have, ip)) missing.push_back(ip);
  const std::string wanted = settings_.elastic() ? fmt::format("{} of {} to {} nodes", waiting, settings_.min_nodes, settings_.nnodes)
                                                 : fmt::format("{} of {} nodes", waiting, settings_.nnodes);
  return fmt::format("waiting for {}; have: {}; missing: {}{}", wanted,
                     have.empty() ? "none" : fmt::format("{}", fmt::join(have, ", ")),
                     missing.empty() ? fmt::format("{} unnamed node(s)", waiting) : fmt::format("{}", fmt::join(missing, ", ")),
                     unreachable.empty() ? "" : " (" + unreachable + ")");
}

void ClusterLink::refuse(int generation, const std::vector<std::string>& nodes) {
  const std::string prefix = generation_key(generation, "refused.");
  try {
    store_->put(prefix + settings_.node_ip, "1");
    if (!store_->hosted_here()) return;
    const auto give_up = Clock::now() + settings_.dead_after;
    for (const auto& ip : nodes)
      while (Clock::now() < give_up && !store_->get(prefix + ip)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } catch (const common::PeerError&) {
  }
}

JobFailure ClusterLink::report(int generation, const JobFailure& failure) {
  // A request can fail for a moment (a signal interrupts it); the store gone fails it for good.
  const auto give_up = Clock::now() + kRetryFor;
  const std::string report_key = generation_key(generation, "report." + settings_.node_ip);
  while (Clock::now() < give_up) {
    try {
      store_->put(report_key, failure.to_json().dump());
      break;
    } catch (const common::PeerError&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::lock_guard lock(mutex_);
  if (!failure_) failure_ = failure;
  return failure;
}

JobFailure ClusterLink::verdict(int generation, const JobFailure& provisional) {
  const bool master_lost = provisional.cause == JobFailure::Cause::kLauncherLost && provisional.ip == settings_.master_ip &&
                           settings_.etcd.empty();
  if (master_lost) return provisional;
  const auto deadline = Clock::now() + settings_.settle_time + 2 * settings_.dead_after;
  auto answered = Clock::now();
  std::optional<JobFailure> root;
  while (!root && Clock::now() < deadline && Clock::now() - answered < kRetryFor) {
    try {
      if (auto text = store_->get(generation_key(generation, "failed"))) root = JobFailure::from_json(*text);
      answered = Clock::now();
    } catch (const common::PeerError&) {
    }
    if (!root) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!root) return provisional;
  const std::string acks = generation_key(generation, "ack.");
  try {
    store_->put(acks + settings_.node_ip, "1");
  } catch (const common::PeerError&) {
  }
  // The master's store must outlive the other nodes' reading of the verdict.
  if (store_->hosted_here()) {
    const auto give_up = Clock::now() + kRetryFor;
    std::vector<RankedNode> members;
    {
      std::lock_guard lock(mutex_);
      members = members_;
    }
    for (const auto& m : members) {
      if (m.node.ip == root->ip && root->cause == JobFailure::Cause::kLauncherLost) continue;
      while (Clock::now() < give_up) {
        try {
          if (store_->get(acks + m.node.ip)) break;
        } catch (const common::PeerError&) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
  return *root;
}

std::optional<JobFailure> ClusterLink::finish(int generation) {
  const std::string prefix = generation_key(generation, "done.");
  try {
    store_->put(prefix + settings_.node_ip, "1");
  } catch (const common::PeerError&) {
    return failure();
  }
  auto last_report = Clock::now();
  while (true) {
    if (auto f = failure()) return f;
    std::vector<std::string> waiting;
    try {
      const std::vector<std::string> done = node_ips(store_->range(prefix), prefix);
      std::lock_guard lock(mutex_);
      for (const auto& m : members_)
        if (!contains(done, m.node.ip)) waiting.push_back(fmt::format("node {} ({})", m.node_rank, m.node.ip));
    } catch (const common::PeerError&) {
      if (!store_->hosted_here()) return failure();
      // Our own store; a failed request is retried.
    }
    if (waiting.empty()) {
      stop_judging();
      // The last node done forgets the job where the store outlives it.
      if (!store_->hosted_here()) {
        try {
          store_->remove_prefix(key(""));
        } catch (const common::PeerError&) {
        }
      }
      return std::nullopt;
    }
    if (!store_->hosted_here()) {
      if (auto f = failure()) return f;
      stop_judging();
      return std::nullopt;
    }
    if (Clock::now() - last_report >= settings_.report_interval) {
      log_.info(fmt::format("this node is done; keeping the master store up until {} finish", fmt::join(waiting, ", ")));
      last_report = Clock::now();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
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
    const std::vector<std::string> done = node_ips(store_->range(prefix), prefix);
    std::lock_guard lock(mutex_);
    return std::all_of(members_.begin(), members_.end(),
                       [&](const RankedNode& m) { return m.node.endpoints.empty() || contains(done, m.node.ip); });
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

std::optional<JobFailure> ClusterLink::failure() {
  std::lock_guard lock(mutex_);
  return failure_;
}

bool ClusterLink::judge_liveness(int generation, const std::vector<RankedNode>& members) {
  bool someone_silent = false;
  for (const auto& m : members) {
    if (m.node.ip == settings_.node_ip || store_->get(generation_key(generation, "done." + m.node.ip))) continue;
    const std::optional<std::string> why = store_->gone(m.node.ip);
    if (!why) {
      someone_silent = someone_silent || store_->silence(m.node.ip) > 2 * settings_.heartbeat_interval;
      continue;
    }
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
