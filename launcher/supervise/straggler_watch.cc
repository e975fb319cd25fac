#include "launcher/supervise/straggler_watch.h"

namespace paddle::launcher {

StragglerWatch::StragglerWatch(size_t processes) : seen_(processes) {}

std::vector<StragglerChange> StragglerWatch::observe(const std::vector<std::optional<common::ProgressReading>>& pages) {
  std::vector<StragglerChange> changes;
  for (size_t i = 0; i < seen_.size() && i < pages.size(); ++i) {
    if (!pages[i]) continue;
    Seen& s = seen_[i];
    s.ratio = pages[i]->straggler_ratio;
    const bool now = pages[i]->straggler_since > 0;
    if (now == s.flagged) continue;
    s.flagged = now;
    changes.push_back({i, now, s.ratio, pages[i]->straggler_since});
  }
  return changes;
}

std::optional<double> StragglerWatch::flagged(size_t process) const {
  const Seen& s = seen_[process];
  return s.flagged ? std::optional<double>(s.ratio) : std::nullopt;
}

}  // namespace paddle::launcher
