#include "launcher/cluster_link.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace paddle::launcher {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRequestTimeout = std::chrono::seconds(2);
constexpr auto kPollInterval = std::chrono::milliseconds(250);
constexpr auto kRetryFor = std::chrono::seconds(2);

std::string seconds(std::chrono::milliseconds ms) { return fmt::format("{:.3g} s", ms.count() / 1000.0); }

}  // namespace

ClusterLink::ClusterLink(ClusterSettings settings, LaunchLog& log) : settings_(std::move(settings)), log_(log) {
  if (settings_.host_master) {
    try {
      server_ = std::make_unique<collective::KvStoreServer>(settings_.master_ip, settings_.master_port);
    } catch (const std::exception& e) {
      throw common::UsageError(fmt::format("--master: this node ({}) hosts the master, but {}", settings_.node_ip, e.what()));
    }
    log_.info(fmt::format("hosting the job's master store on {}:{} (job {})", settings_.master_ip, settings_.master_port,
                          settings_.job_id));
  }
  store_ = std::make_unique<collective::HttpStore>(settings_.master_ip, settings_.master_port, settings_.rendezvous_timeout,
                                                   kRequestTimeout);
  watcher_ = std::make_unique<collective::HttpStore>(settings_.master_ip, settings_.master_port,
                                                     settings_.rendezvous_timeout, kRequestTimeout);
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

std::vector<RankedNode> ClusterLink::join(int generation, const NodeRegistration& me) {
  const std::string prefix = generation_key(generation, "node.");
  const auto started = Clock::now();
  auto last_report = started;
  bool registered = false;
  std::optional<Clock::time_point> reached;  // the last time the master answered
  std::string unreachable;
  while (true) {
    std::vector<std::string> have;
    try {
      // Registering is idempotent: a reply lost to a timeout is simply sent again.
      registered = store_->try_put(prefix + me.ip, me.to_json().dump());
      if (registered) {
        for (const auto& k : store_->keys(prefix)) have.push_back(k.substr(prefix.size()));
        reached = Clock::now();
      }
      unreachable.clear();
    } catch (const common::PeerError& e) {
      unreachable = e.what();
    }
    if (!registered) unreachable = fmt::format("the master {}:{} is not reachable yet", settings_.master_ip, settings_.master_port);
    if (reached && Clock::now() - *reached > settings_.dead_after)
      throw common::PeerError(fmt::format("the master {}:{} went away during the rendezvous of job {} (its launcher "
                                          "exited or was killed: see its log)",
                                          settings_.master_ip, settings_.master_port, settings_.job_id));
    if (static_cast<int>(have.size()) > settings_.nnodes)
      throw common::UsageError(fmt::format("--nnodes={}: {} nodes registered with the master: {}", settings_.nnodes,
                                           have.size(), fmt::join(have, ", ")));
    if (static_cast<int>(have.size()) == settings_.nnodes) return complete(generation, have);
    const std::string status = rendezvous_status(have, unreachable);
    const auto now = Clock::now();
    if (now - started >= settings_.rendezvous_timeout)
      throw RendezvousTimeout(fmt::format("rendezvous of job {} at master {}:{} timed out after {}: {}", settings_.job_id,
                                          settings_.master_ip, settings_.master_port, seconds(settings_.rendezvous_timeout),
                                          status));
    if (now - last_report >= settings_.report_interval) {
      log_.info(status);
      last_report = now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::vector<RankedNode> ClusterLink::complete(int generation, const std::vector<std::string>& have) {
  const std::string prefix = generation_key(generation, "node.");
  std::vector<NodeRegistration> nodes;
  for (const auto& ip : have) nodes.push_back(NodeRegistration::from_json(store_->try_get(prefix + ip).value_or("")));
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
  return ranked;
}

std::string ClusterLink::rendezvous_status(const std::vector<std::string>& have, const std::string& unreachable) const {
  const int waiting = settings_.nnodes - static_cast<int>(have.size());
  std::vector<std::string> missing;
  for (const auto& ip : settings_.ips_order)
    if (std::find(have.begin(), have.end(), ip) == have.end()) missing.push_back(ip);
  return fmt::format("waiting for {} of {} nodes; have: {}; missing: {}{}", waiting, settings_.nnodes,
                     have.empty() ? "none" : fmt::format("{}", fmt::join(have, ", ")),
                     missing.empty() ? fmt::format("{} unnamed node(s)", waiting) : fmt::format("{}", fmt::join(missing, ", ")),
                     unreachable.empty() ? "" : " (" + unreachable + ")");
}

void ClusterLink::refuse(int generation, const std::vector<std::string>& nodes) {
  const std::string prefix = generation_key(generation, "refused.");
  try {
    store_->try_put(prefix + settings_.node_ip, "1");
    if (!server_) return;
    const auto give_up = Clock::now() + settings_.dead_after;
    for (const auto& ip : nodes)
      while (Clock::now() < give_up && !store_->try_get(prefix + ip)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } catch (const common::PeerError&) {
  }
}

JobFailure ClusterLink::report(int generation, const JobFailure& failure) {
  // A request can fail for a moment (a signal interrupts it); the master gone fails it for good.
  const auto give_up = Clock::now() + kRetryFor;
  const std::string report_key = generation_key(generation, "report." + settings_.node_ip);
  while (Clock::now() < give_up) {
    try {
      if (store_->try_put(report_key, failure.to_json().dump())) break;
    } catch (const common::PeerError&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::lock_guard lock(mutex_);
  if (!failure_) failure_ = failure;
  return failure;
}

JobFailure ClusterLink::verdict(int generation, const JobFailure& provisional) {
  const bool master_lost = provisional.cause == JobFailure::Cause::kLauncherLost && provisional.ip == settings_.master_ip;
  if (master_lost) return provisional;
  const auto deadline = Clock::now() + settings_.settle_time + settings_.dead_after;
  auto answered = Clock::now();
  std::optional<JobFailure> root;
  while (!root && Clock::now() < deadline && Clock::now() - answered < kRetryFor) {
    try {
      if (auto text = store_->try_get(generation_key(generation, "failed"))) root = JobFailure::from_json(*text);
      answered = Clock::now();
    } catch (const common::PeerError&) {
    }
    if (!root) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!root) return provisional;
  const std::string acks = generation_key(generation, "ack.");
  try {
    store_->try_put(acks + settings_.node_ip, "1");
  } catch (const common::PeerError&) {
  }
  // The master's store must outlive the other nodes' reading of the verdict.
  if (server_) {
    const auto give_up = Clock::now() + kRetryFor;
    std::vector<RankedNode> members;
    {
      std::lock_guard lock(mutex_);
      members = members_;
    }
    for (const auto& m : members) {
      if (m.node.ip == root->ip && root->cause == JobFailure::Cause::kLauncherLost) continue;
      while (Clock::now() < give_up && !store_->try_get(acks + m.node.ip)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return *root;
}

std::optional<JobFailure> ClusterLink::finish(int generation) {
  const std::string prefix = generation_key(generation, "done.");
  try {
    store_->try_put(prefix + settings_.node_ip, "1");
  } catch (const common::PeerError&) {
    return failure();
  }
  if (!server_) return failure();
  auto last_report = Clock::now();
  while (true) {
    if (auto f = failure()) return f;
    std::vector<std::string> waiting;
    try {
      const std::vector<std::string> done = store_->keys(prefix);
      std::lock_guard lock(mutex_);
      for (const auto& m : members_)
        if (std::find(done.begin(), done.end(), prefix + m.node.ip) == done.end())
          waiting.push_back(fmt::format("node {} ({})", m.node_rank, m.node.ip));
    } catch (const common::PeerError&) {
      // Our own store; a failed request is retried.
    }
    if (waiting.empty()) return std::nullopt;
    if (Clock::now() - last_report >= settings_.report_interval) {
      log_.info(fmt::format("this node is done; keeping the master store up until {} finish", fmt::join(waiting, ", ")));
      last_report = Clock::now();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::optional<JobFailure> ClusterLink::failure() {
  std::lock_guard lock(mutex_);
  return failure_;
}

void ClusterLink::judge_liveness(int generation, const std::vector<RankedNode>& members) {
  std::set<std::string> closed;
  if (auto lost = collective::Liveness(settings_.master_ip, settings_.master_port).lost())
    for (const auto& name : *lost) closed.insert(name);
  for (const auto& m : members) {
    if (m.node.ip == settings_.node_ip || watcher_->try_get(generation_key(generation, "done." + m.node.ip))) continue;
    std::string why;
    if (closed.count(key(m.node.ip))) {
      why = "its launcher is gone (its connection to the master closed)";
    } else if (auto age = heartbeat_age(generation, m.node.ip); age && *age > settings_.dead_after) {
      why = fmt::format("its launcher sent no heartbeat for {} (killed, or cut off from the network)", seconds(*age));
    }
    if (why.empty()) continue;
    JobFailure lost;
    lost.cause = JobFailure::Cause::kLauncherLost;
    lost.node_rank = m.node_rank;
    lost.ip = m.node.ip;
    lost.hostname = m.node.hostname;
    lost.what = why;
    watcher_->try_put(generation_key(generation, "report." + m.node.ip), lost.to_json().dump());
  }
}

std::optional<std::chrono::milliseconds> ClusterLink::heartbeat_age(int generation, const std::string& ip) {
  // A launcher killed before its first heartbeat has only its registration to go by.
  if (auto age = watcher_->age(key("hb." + ip))) return age;
  return watcher_->age(generation_key(generation, "node." + ip));
}

void ClusterLink::judge_root_cause(int generation) {
  const std::string prefix = generation_key(generation, "report.");
  const std::vector<std::string> reports = watcher_->keys(prefix);
  if (reports.empty()) return;
  if (!first_report_) first_report_ = Clock::now();
  if (Clock::now() - *first_report_ < settings_.settle_time) return;
  std::optional<std::pair<std::pair<int, long>, JobFailure>> best;  // ((cause, -age), report)
  for (const auto& k : reports) {
    auto text = watcher_->try_get(k);
    auto age = watcher_->age(k);
    if (!text || !age) continue;
    JobFailure f = JobFailure::from_json(*text);
    const std::pair<int, long> rank{static_cast<int>(f.cause), -static_cast<long>(age->count())};
    if (!best || rank < best->first) best.emplace(rank, std::move(f));
  }
  if (best) watcher_->add_if_absent(generation_key(generation, "failed"), best->second.to_json().dump());
}

void ClusterLink::watch() {
  auto last_heartbeat = Clock::now() - settings_.heartbeat_interval;
  auto reachable_at = Clock::now();  // the last time the master answered
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
      if (!presence_ && !server_) presence_ = collective::Liveness(settings_.master_ip, settings_.master_port).announce(key(settings_.node_ip));
      if (Clock::now() - last_heartbeat >= settings_.heartbeat_interval) {
        if (!watcher_->try_put(key("hb." + settings_.node_ip), "1")) throw common::PeerError("unreachable");
        last_heartbeat = Clock::now();
      }
      if (generation >= 0 && !verdict_seen) poll_failures(generation, members, failed);
      reachable_at = Clock::now();
    } catch (const common::PeerError&) {
      if (generation >= 0 && !failed && Clock::now() - reachable_at > settings_.dead_after) {
        std::lock_guard lock(mutex_);
        if (!failure_) failure_ = master_lost(members);
      }
    }
  }
}

void ClusterLink::poll_failures(int generation, const std::vector<RankedNode>& members, bool failed) {
  if (server_) {
    judge_liveness(generation, members);
    judge_root_cause(generation);
  }
  std::optional<JobFailure> seen;
  bool is_verdict = false;
  if (auto text = watcher_->try_get(generation_key(generation, "failed"))) {
    seen = JobFailure::from_json(*text);
    is_verdict = true;
  } else if (!failed) {
    const std::vector<std::string> reports = watcher_->keys(generation_key(generation, "report."));
    if (!reports.empty())
      if (auto text = watcher_->try_get(reports.front())) seen = JobFailure::from_json(*text);
  }
  std::lock_guard lock(mutex_);
  if (seen && generation_ == generation && (is_verdict || !failure_)) {
    failure_ = seen;
    verdict_seen_ = is_verdict;
  }
}

JobFailure ClusterLink::master_lost(const std::vector<RankedNode>& members) const {
  JobFailure lost;
  lost.cause = JobFailure::Cause::kLauncherLost;
  lost.ip = settings_.master_ip;
  lost.hostname = "the master";
  for (const auto& m : members)
    if (m.node.ip == settings_.master_ip) lost.node_rank = m.node_rank;
  lost.what = fmt::format("the master store {}:{} has been unreachable for {} (its launcher is gone, or this node is cut "
                          "off from it)",
                          settings_.master_ip, settings_.master_port, seconds(settings_.dead_after));
  return lost;
}

}  // namespace paddle::launcher
