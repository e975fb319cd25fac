#pragma once
// HangExchange: a hang's findings on their way to the launcher that judges a multi-node job,
// and its verdict on the way back to every node (supervise/hang_verdict.h). A node that finds a
// hang puts its findings once, JOB.gG.hang.node.IP:
//
//   {"timeout": 30, "log_dir": "log", "findings": [<hang_verdict.h's finding>, ...]}
//
// and withdraws them ({"findings": []}) once its processes move again. The judge's watch hears
// them, and writes one verdict, JOB.gG.hang.verdict, once every node of the job has reported; or,
// where a process is hung on its own (stopped, unkillable, or quiet outside a collective), 2 s
// after the first report: ranks that wait in a collective may be waiting for a node whose
// processes go on (rank 0 evaluating), which never reports:
//
//   {"number": 1, "line": "the job made no progress for 30 s: trainer 3 (node 1, ...) is the
//    culprit: ...", "summary": "trainer 3 (node 1, local 1, pid 4242) made no progress for 30 s:
//    it has not entered allreduce #1,205, ...", "culprit": true}
//
// which every node's watch reads. Only these cross the network, and only for a hang: nothing
// of a process's progress travels while the job is well.

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "store/control_store.h"

namespace paddle::launcher {

class HangExchange {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kGather{2};

  // The judge's side: a node's findings, as the watch heard them.
  void heard(const store::ControlStore::Entry& findings, Clock::time_point now);
  // The verdict to write now over the findings heard since the last, when it is due (above).
  std::optional<std::string> due(size_t nodes, Clock::time_point now);

  // Every node's side: the verdict as the watch read it; the latest, with its number.
  void verdict_seen(const std::string& value);
  std::optional<nlohmann::json> latest() const { return latest_; }

  // A generation begins: nothing of the last one's hangs holds.
  void begin();

 private:
  struct Pending {
    nlohmann::json value;
    Clock::time_point heard;
  };
  std::map<std::string, Pending> pending_;  // by key
  int verdicts_ = 0;
  std::optional<nlohmann::json> latest_;
};

}  // namespace paddle::launcher
