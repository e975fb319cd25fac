// ClusterLink, step one: the rendezvous (join). A fixed job waits for its --nnodes; an elastic
// one closes a generation of MIN to MAX members (the keys: cluster_link.h).
#include "launcher/cluster/cluster_link.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <thread>
#include <unordered_set>

#include "store/store_wire.h"

#include "common/parse.h"
#include "common/wait.h"
#include "launcher/cluster/cluster_link_detail.h"
#include "launcher/cluster/member_list.h"

namespace paddle::launcher {

using namespace cluster_link_detail;

namespace {

// The judge's look at an elastic generation's registrations: etcd ranges are O(nodes).
constexpr auto kElasticRound = std::chrono::milliseconds(100);
// How long an etcd job's node waits for a member list before it looks whether it judges now.
constexpr auto kElasticTurn = std::chrono::milliseconds(1000);
// How long the judge's watch of the registrations waits for the next.
constexpr auto kJudgeRound = std::chrono::milliseconds(250);
// The judge's pause after a watch that brought registrations, so that those arriving at once
// come in a few answers rather than one round trip each.
constexpr auto kJudgeGather = std::chrono::milliseconds(10);

}  // namespace

JoinedGeneration ClusterLink::join(int generation, const NodeRegistration& me) {
  // A node is alive before it registers, so the judge can tell when it goes.
  try {
    store_->heartbeat();
  } catch (const store::LeaseEnded&) {
    throw;
  } catch (const common::PeerError&) {
    // Not reachable yet: the rendezvous waits for it and says so.
  }
  return settings_.elastic() ? join_elastic(generation, me) : join_fixed(generation, me);
}

void ClusterLink::throw_if_lease_ended() const {
  std::lock_guard lock(mutex_);
  if (lease_ended_)
    throw store::LeaseEnded(fmt::format("{}; this node leaves the rendezvous of job {} (start its launcher again to rejoin)",
                                 *lease_ended_, settings_.job_id));
}

std::string ClusterLink::waiting_in_rendezvous(int generation, const std::string& status) const {
  return fmt::format("waiting in the rendezvous of job {} (generation {}) at {}: {}", settings_.job_id, generation,
                     store_->describe(), status);
}

void ClusterLink::check_rendezvous_time(Clock::time_point started, const std::function<std::string()>& status) {
  if (Clock::now() - started >= settings_.rendezvous_timeout)
    throw RendezvousTimeout(fmt::format("rendezvous of job {} at {} timed out after {}: {}", settings_.job_id,
                                        store_->describe(), seconds(settings_.rendezvous_timeout), status()));
}

JoinedGeneration ClusterLink::join_fixed(int generation, const NodeRegistration& me) {
  const std::string prefix = generation_key(generation, "node.");
  const std::string members_key = generation_key(generation, "members");
  const std::string status_key = generation_key(generation, "waiting");
  const auto started = Clock::now();
  auto last_report = started;
  // The last time the store answered. A later generation's store answered the one before: from
  // then on, silence for dead_after means it is gone (a master's launcher killed), not yet to come.
  std::optional<Clock::time_point> reached;
  if (generation > 0) reached = Clock::now();
  bool registered = false;
  // The judge's count of the registrations, kept from its watch: each arrives once.
  std::map<std::string, std::string> seen;
  int64_t after = 0;
  std::string status = "waiting for the member list";
  // The judge's status line, O(nodes): written only when it is shown.
  auto judge_status = [&] {
    std::vector<std::string> have;
    for (const auto& [ip, registration] : seen) have.push_back(ip);
    return rendezvous_status(have, "");
  };
  std::optional<std::string> left;  // a node of the last generation gone: no meeting without it
  while (true) {
    std::string unreachable;
    std::optional<std::string> members;
    try {
      if (!registered) {
        store_->put_while_alive(prefix + me.ip, me.to_json().dump());
        registered = true;
      }
      if (store_->judges()) {
        const store::ControlStore::Changes changes = store_->watch({prefix}, after, kJudgeRound);
        after = changes.revision;
        for (const auto& e : changes.entries) seen[e.key.substr(prefix.size())] = e.value;
        if (static_cast<int>(seen.size()) > settings_.nnodes) {
          std::vector<std::string> have;
          for (const auto& [ip, registration] : seen) have.push_back(ip);
          throw common::UsageError(fmt::format("--nnodes={}: {} nodes registered with {}: {}", settings_.nnodes,
                                               have.size(), store_->describe(), fmt::join(have, ", ")));
        }
        if (generation > 0 && !left) left = member_left(generation, seen);
        if (static_cast<int>(seen.size()) == settings_.nnodes) {
          std::vector<NodeRegistration> nodes;
          for (const auto& [ip, registration] : seen) nodes.push_back(NodeRegistration::from_json(registration));
          members = store_->add_if_absent(members_key, encode_member_list(nodes));
        } else {
          if (Clock::now() - last_report >= settings_.report_interval) {
            status = judge_status();
            store_->put(status_key, status);
          }
          if (!changes.entries.empty()) std::this_thread::sleep_for(kJudgeGather);
        }
      } else {
        // Every node but the judge waits on the one key, and hears of the others only in the
        // status the judge leaves, read when the wait runs out.
        members = store_->wait_for(members_key, member_wait());
        if (!members && Clock::now() - last_report >= settings_.report_interval)
          status = store_->get(status_key).value_or(fmt::format("waiting for the member list from {}", store_->describe()));
      }
      reached = Clock::now();
    } catch (const common::PeerError& e) {
      if (dynamic_cast<const store::StoreRefused*>(&e)) throw;
      // A signal ends the store's waits too: what this node waited for is what it knew before.
      throw_if_stopped([&] { return waiting_in_rendezvous(generation, seen.empty() ? status : judge_status()); });
      unreachable = fmt::format("{} is not reachable yet", store_->describe());
    }
    if (left) throw common::PeerError(*left);
    if (reached && Clock::now() - *reached > settings_.dead_after)
      throw common::PeerError(fmt::format("{} went away during the rendezvous of job {} (its launcher exited or was "
                                          "killed: see its log)",
                                          store_->describe(), settings_.job_id));
    if (members) return complete(generation, *members);
    if (!unreachable.empty()) status = rendezvous_status({}, unreachable);
    const auto current_status = [&] { return seen.empty() || !unreachable.empty() ? status : judge_status(); };
    throw_if_stopped([&] { return waiting_in_rendezvous(generation, current_status()); });
    throw_if_lease_ended();
    check_rendezvous_time(started, current_status);
    if (Clock::now() - last_report >= settings_.report_interval) {
      log_.info(status);
      last_report = Clock::now();
    }
    if (!unreachable.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::optional<std::string> ClusterLink::member_left(int generation,
                                                    const std::map<std::string, std::string>& registered) {
  const std::shared_ptr<const std::vector<RankedNode>> members = members_now();
  std::vector<std::string> awaited;
  for (const auto& m : *members)
    if (!registered.count(m.node.ip)) awaited.push_back(m.node.ip);
  if (awaited.empty()) return std::nullopt;
  const auto gone = store_->gone(awaited);
  for (const auto& m : *members)
    if (auto it = gone.find(m.node.ip); it != gone.end())
      return fmt::format("node {} ({}) left job {} before the rendezvous of generation {}: {}; a fixed job cannot meet "
                         "again without it",
                         m.node_rank, m.node.ip, settings_.job_id, generation, it->second);
  return std::nullopt;
}

std::chrono::milliseconds ClusterLink::member_wait() const {
  // On etcd another launcher may take the judge's place, so each waits in short turns.
  return settings_.etcd.empty() ? settings_.report_interval : std::min(settings_.report_interval, kElasticTurn);
}

JoinedGeneration ClusterLink::join_elastic(int generation, const NodeRegistration& me) {
  int target = generation;
  const auto started = Clock::now();
  auto last_report = started;
  std::optional<Clock::time_point> enough_since;  // MIN nodes were registered for `target`
  int announced_wait = -1;
  int registered_for = -1;
  while (true) {
    std::string unreachable;
    std::vector<std::string> have;
    bool waited = false;
    try {
      if (auto newest = store_->get(key("generation")))
        target = std::max(target, static_cast<int>(common::to_int(*newest).value_or(0)));
      const std::string prefix = generation_key(target, "node.");
      if (auto members = store_->get(generation_key(target, "members"))) {
        const std::vector<NodeRegistration> nodes = decode_member_list(*members);
        if (std::any_of(nodes.begin(), nodes.end(), [&](const NodeRegistration& n) { return n.ip == me.ip; }))
          return complete(target, *members);
        if (announced_wait != target) {
          log_.info(fmt::format("generation {} of job {} runs with {} node(s) without this one; this node joins generation {}",
                                target, settings_.job_id, nodes.size(), target + 1));
          announced_wait = target;
        }
        ++target;
        enough_since.reset();
        continue;
      }
      if (registered_for != target) {
        store_->put_while_alive(prefix + me.ip, me.to_json().dump());
        registered_for = target;
      }
      if (!store_->judges()) {
        // The judge closes the generation; the others wait for its member list, and look at
        // the registrations only for the status line when the wait runs out.
        if (!store_->wait_for(generation_key(target, "members"), member_wait()))
          have = node_ips(store_->range(prefix), prefix);
        waited = true;
      } else {
        const std::vector<store::ControlStore::Entry> registrations = store_->range(prefix);
        have = node_ips(registrations, prefix);
        if (static_cast<int>(have.size()) >= settings_.min_nodes && !enough_since) enough_since = Clock::now();
        if (static_cast<int>(have.size()) < settings_.min_nodes) enough_since.reset();
        if (may_start(target, have, enough_since)) {
          close_generation(target, registrations);
          continue;
        }
      }
    } catch (const common::PeerError& e) {
      throw_if_stopped([&] { return waiting_in_rendezvous(target, rendezvous_status(have, "")); });
      unreachable = e.what();
    }
    const std::string status = rendezvous_status(have, unreachable);
    throw_if_stopped([&] { return waiting_in_rendezvous(target, status); });
    throw_if_lease_ended();
    check_rendezvous_time(started, [&] { return status; });
    if (Clock::now() - last_report >= settings_.report_interval) {
      log_.info(fmt::format("generation {}: {}", target, status));
      last_report = Clock::now();
    }
    if (!waited) std::this_thread::sleep_for(kElasticRound);
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
  const std::unordered_set<std::string> registered(have.begin(), have.end());
  return std::all_of(alive.begin(), alive.end(), [&](const std::string& ip) { return registered.count(ip) > 0; });
}

void ClusterLink::close_generation(int generation, const std::vector<store::ControlStore::Entry>& registrations) {
  std::vector<NodeRegistration> nodes;
  for (const auto& e : registrations) nodes.push_back(NodeRegistration::from_json(e.value));
  std::unordered_set<std::string> earlier;
  if (auto members = store_->get(generation_key(generation - 1, "members")))
    for (const auto& n : decode_member_list(*members)) earlier.insert(n.ip);
  std::vector<RankedNode> ranked = rank_nodes(std::move(nodes), settings_.ips_order);
  std::stable_partition(ranked.begin(), ranked.end(), [&](const RankedNode& n) { return earlier.count(n.node.ip) > 0; });
  if (static_cast<int>(ranked.size()) > settings_.nnodes) ranked.resize(settings_.nnodes);
  std::vector<NodeRegistration> members;
  for (auto& n : ranked) members.push_back(std::move(n.node));
  store_->add_if_absent(generation_key(generation, "members"), encode_member_list(members));
  store_->put(key("generation"), std::to_string(generation));
}

JoinedGeneration ClusterLink::complete(int generation, const std::string& members) {
  MemberLists::List list;
  try {
    list = member_lists_->list(members, settings_.ips_order);
  } catch (const common::UsageError&) {
    // Every node finds the same contradiction; the master's store stays up until they have.
    std::vector<std::string> ips;
    for (const auto& n : decode_member_list(members)) ips.push_back(n.ip);
    refuse(generation, ips);
    throw;
  }
  std::lock_guard lock(mutex_);
  generation_ = generation;
  members_ = list.ranked;
  failure_.reset();
  failure_from_silence_ = false;
  verdict_seen_ = false;
  wake_.notify_all();
  return {generation, list.restarts_used, list.ranked};
}

std::string ClusterLink::rendezvous_status(const std::vector<std::string>& have, const std::string& unreachable) const {
  const int waiting = std::max(settings_.min_nodes - static_cast<int>(have.size()), 0);
  const std::unordered_set<std::string> present(have.begin(), have.end());
  std::vector<std::string> missing;
  for (const auto& ip : settings_.ips_order)
    if (!present.count(ip)) missing.push_back(ip);
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
    for (const auto& ip : nodes) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - Clock::now());
      common::wait_until(std::max(left, std::chrono::milliseconds(0)),
                         [&] { return stop_requested() || store_->get(prefix + ip).has_value(); },
                         std::chrono::milliseconds(20));
    }
  } catch (const common::PeerError&) {
  }
}

}  // namespace paddle::launcher
