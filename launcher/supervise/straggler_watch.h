#pragma once
// StragglerWatch: which local ranks are stragglers now. The ranks of our runtime judge that among
// themselves from their busy time per step (runtime/train/run/straggler_window.h, with the factor
// the launcher passes in PADDLE_STRAGGLER_FACTOR) and write the verdict on their progress pages
// (common/progress_page.h); the launcher reads the pages each second and says each change once,
// and in a multi-node job sends that line to the launcher that judges, whose console shows every
// node's: one put per change, no figure of a well job crosses the launchers' network.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/progress_page.h"

namespace paddle::launcher {

// A change's console line, as it travels to the launcher that judges a multi-node job, which
// shows every other node's beside its own (cluster/cluster_link.h).
struct StragglerNews {
  std::string line;      // "straggler: trainer 3 (node 1, local 1, pid 4242) is 3.1x ..."
  bool flagged = false;  // false: "... has recovered"
};

struct StragglerChange {
  size_t process = 0;
  bool flagged = false;  // false: it has recovered
  double ratio = 0;      // its busy time per step over the job's median, last measured
  int64_t since = 0;     // the step it became one (flagged)
};

class StragglerWatch {
 public:
  // `processes`: how many the supervisor has, in its order.
  explicit StragglerWatch(size_t processes);

  // Each process's page now (nothing: none, or exited); the verdicts that changed.
  std::vector<StragglerChange> observe(const std::vector<std::optional<common::ProgressReading>>& pages);
  // The ratio of a process flagged now, nothing for the others.
  std::optional<double> flagged(size_t process) const;

 private:
  struct Seen {
    bool flagged = false;
    double ratio = 0;
  };
  std::vector<Seen> seen_;
};

}  // namespace paddle::launcher
