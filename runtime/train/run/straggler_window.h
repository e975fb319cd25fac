#pragma once
// StragglerWindow: whether this rank is a straggler, judged by the ranks themselves from their
// busy time per step (common/progress_page.h: time not spent waiting in collectives; in a
// synchronous job every rank's step lasts as long as the slowest's, and only busy time tells
// who that is). Every kSteps steps each rank's mean busy time over them is gathered among the
// ranks (one allgather of one float); a rank whose mean is at least `factor` times the job's
// median, and kNoise more, in kFlagAfter of the last kHistory windows is a straggler, until it is below in all of
// them (a straggler's windows vary: one that lands in its waits looks even). Each change is a line
// in the rank's log; the verdict goes on its progress page, where its launcher reads it and says so
// (launcher/supervise/straggler_watch.h): no figure crosses the launchers' network.
//
// The ratio on the page is the median of the last kHistory windows' (a straggler's windows vary);
// while it is flagged, of those windows that keep it flagged, so a flag never reads below the
// factor.
// The factor is PADDLE_STRAGGLER_FACTOR, which the launcher sets from --straggler_factor
// (default 2; 0: not judged).

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "common/progress_page.h"

namespace paddle::runtime {

class StragglerWindow {
 public:
  static constexpr int64_t kSteps = 5;
  static constexpr size_t kHistory = 5;
  static constexpr size_t kFlagAfter = 3;
  // Steps of this process's run before it judges: the first steps (its kernels' set-up, the first
  // touches of its memory) differ from rank to rank by more than a straggler's.
  static constexpr int64_t kWarmUpSteps = 25;
  // Seconds per step below which a difference is the scheduler's noise (a time slice is
  // milliseconds), not a straggler: steps of tens of microseconds on a busy machine vary so.
  static constexpr double kNoise = 0.5e-3;
  // Every rank's value, in rank order: one collective call, made by every rank at once.
  using Gather = std::function<std::vector<float>(float)>;

  StragglerWindow(double factor, int rank, common::ProgressPage& page, Gather gather);

  // After global step `step`, with the page's last busy time counted. Every rank calls it at the
  // same steps.
  void step_done(int64_t step);

  bool straggler() const { return since_ > 0; }
  // The ratio last put on the page (above).
  double ratio() const { return ratio_; }

 private:
  double factor_;
  int rank_;
  common::ProgressPage& page_;
  Gather gather_;
  double busy_ = 0;
  int64_t steps_ = 0;
  std::deque<bool> above_;      // the last windows: at or past the factor
  std::deque<double> ratios_;  // and their ratios
  int64_t seen_ = 0;           // steps this process has run
  int64_t since_ = 0;
  double ratio_ = 0;
};

}  // namespace paddle::runtime
