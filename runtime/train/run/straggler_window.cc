#include "runtime/train/run/straggler_window.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace paddle::runtime {

StragglerWindow::StragglerWindow(double factor, int rank, common::ProgressPage& page, Gather gather)
    : factor_(factor), rank_(rank), page_(page), gather_(std::move(gather)) {}

void StragglerWindow::step_done(int64_t step) {
  if (factor_ <= 0) return;
  ++seen_;
  busy_ += page_.last_busy_seconds();
  if (++steps_ < kSteps || step % kSteps != 0) return;
  const std::vector<float> all = gather_(static_cast<float>(busy_ / static_cast<double>(steps_)));
  busy_ = 0;
  steps_ = 0;
  if (all.size() < 2 || static_cast<size_t>(rank_) >= all.size()) return;
  std::vector<float> sorted = all;
  std::ranges::sort(sorted);
  const size_t n = sorted.size();
  const double median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (static_cast<double>(sorted[n / 2 - 1]) + sorted[n / 2]);
  if (median <= 0) return;
  if (seen_ <= kWarmUpSteps) return;  // every rank gathered all the same: the collective stays in step
  const double mine = all[static_cast<size_t>(rank_)];
  above_.push_back(mine / median >= factor_ && mine - median >= kNoise);
  ratios_.push_back(mine / median);
  if (above_.size() > kHistory) above_.pop_front();
  if (ratios_.size() > kHistory) ratios_.pop_front();
  const auto above = static_cast<size_t>(std::ranges::count(above_, true));
  const bool flag = since_ == 0 && above >= kFlagAfter, clear = since_ > 0 && above == 0;
  const bool flagged = (since_ > 0 || flag) && !clear;
  // The ratio said: the median of the last windows; while flagged, of those that keep it
  // flagged, so that a straggler never reads below the factor (its windows alternate while it is
  // held in bursts, and the launcher reads the page once a second).
  std::vector<double> recent;
  for (size_t i = 0; i < ratios_.size(); ++i)
    if (!flagged || above_[i]) recent.push_back(ratios_[i]);
  std::ranges::sort(recent);
  const double ratio = recent[recent.size() / 2];
  ratio_ = ratio;
  if (flag) {
    since_ = step;
    fmt::print("straggler: this rank's busy time per step is {:.1f}x the job's median, since step {}\n", ratio, step);
    std::fflush(stdout);
  } else if (clear) {
    since_ = 0;
    fmt::print("straggler: this rank has recovered at step {}: {:.1f}x the job's median\n", step, ratio);
    std::fflush(stdout);
  }
  page_.set_straggler(ratio, since_);
}

}  // namespace paddle::runtime
