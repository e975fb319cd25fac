#pragma once
// Judge: the decisions of the one launcher that judges a multi-node job (the master's host, or
// etcd's holder of JOB.judge; cluster_link.h has the keys). Each round it asks the store which
// members are gone or silent, reports the gone as "launcher lost", admits a newcomer to an
// elastic job, and once the reports have settled writes the verdict: the most likely root cause,
// the same for every node. It reads the generation's reports from what its node's watch hears,
// so a round costs the lost and the reports, never a pass over every node's keys.
//
// The clock is given, so that tests drive the settle time and dead_after without waiting.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "store/control_store.h"
#include "launcher/plan/rank_map.h"

namespace paddle::launcher {

struct JudgeSettings {
  std::string job_id;
  std::string node_ip;  // the judging node: never judged gone by itself
  int nnodes = 1;       // the most nodes
  bool elastic = false;
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds dead_after{5000};
  std::chrono::milliseconds settle_time{1500};
};

class Judge {
 public:
  using Clock = std::chrono::steady_clock;

  Judge(store::ControlStore& store, JudgeSettings settings, std::function<Clock::time_point()> now = Clock::now);

  // A generation begins: the reports of the one before are forgotten.
  void begin(int generation);
  // A report of the generation (JOB.gG.report.IP), as the watch brought it.
  void heard(const store::ControlStore::Entry& report);
  // One round over the generation's `members` (throws common::PeerError when the store is gone).
  void round(int generation, const std::vector<RankedNode>& members);

 private:
  // Reports the members the store counts as gone; returns whether one is silent, and so may be
  // gone before the store says (the verdict waits for it then).
  bool liveness(int generation, const std::vector<RankedNode>& members);
  // An elastic job below its most nodes admits a node that registered for the next generation.
  void newcomers(int generation, const std::vector<RankedNode>& members);
  void root_cause(int generation, bool someone_silent);
  std::string key(int generation, const std::string& suffix) const;

  store::ControlStore& store_;
  JudgeSettings settings_;
  std::function<Clock::time_point()> now_;
  int generation_ = -1;
  std::map<std::string, store::ControlStore::Entry> reports_;  // by key
  std::optional<Clock::time_point> first_report_;       // when this judge first had one
  // Members whose done key this judge has read: once written it stays for the generation, so
  // each is asked about at most once, however many rounds it stays silent after finishing.
  std::unordered_set<std::string> done_;
};

}  // namespace paddle::launcher
