#include "kernels/onednn/kernel_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>

namespace paddle::kernels::onednn {
namespace {

double fastest_us(const std::function<void()>& call, int runs) {
  call();
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    call();
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

Race::Race(size_t ways, int rounds)
    : best_(ways, std::numeric_limits<double>::infinity()), running_(ways, true), rounds_(rounds), decided_(ways < 2) {}

void Race::record(double us) {
  if (decided_) return;
  if (pass_ > 0) best_[next_] = std::min(best_[next_], us);
  size_t following = next_ + 1;
  while (following < running_.size() && !running_[following]) ++following;
  if (following < running_.size()) {
    next_ = following;
    return;
  }
  constexpr double kClearLoser = 1.25;
  const double leader = *std::min_element(best_.begin(), best_.end());
  if (pass_ > 0)
    for (size_t i = 0; i < best_.size(); ++i) running_[i] = running_[i] && best_[i] <= kClearLoser * leader;
  ++pass_;
  if (pass_ > rounds_ || std::count(running_.begin(), running_.end(), true) < 2) {
    decided_ = true;
    next_ = static_cast<size_t>(std::min_element(best_.begin(), best_.end()) - best_.begin());
    return;
  }
  next_ = static_cast<size_t>(std::find(running_.begin(), running_.end(), true) - running_.begin());
}

OpTiming time_op(const std::function<void()>& forward, const std::function<void()>& backward, int runs) {
  OpTiming t;
  t.forward_us = fastest_us(forward, runs);
  t.backward_us = fastest_us(backward, runs);
  return t;
}

KernelChoice choose_faster(const std::string& what, const OpTiming& ours, const OpTiming& library) {
  KernelChoice choice;
  choice.ours = ours.total_us() <= library.total_us();
  const OpTiming& chosen = choice.ours ? ours : library;
  const OpTiming& other = choice.ours ? library : ours;
  choice.line = fmt::format("{}: {}, {:.0f} + {:.0f} us forward + backward, against {} {:.0f} + {:.0f} us, timed here",
                            what, choice.ours ? "ours" : "oneDNN's", chosen.forward_us, chosen.backward_us,
                            choice.ours ? "oneDNN's" : "ours", other.forward_us, other.backward_us);
  return choice;
}

FastestWay fastest_way(const std::vector<TimedWay>& ways) {
  FastestWay fastest;
  for (size_t i = 1; i < ways.size(); ++i)
    if (ways[i].us < ways[fastest.index].us) fastest.index = i;
  fastest.words = fmt::format("{}, {:.0f} us", ways[fastest.index].name, ways[fastest.index].us);
  std::string against;
  for (size_t i = 0; i < ways.size(); ++i)
    if (i != fastest.index) against += fmt::format("{}{} {:.0f} us", against.empty() ? "" : ", ", ways[i].name, ways[i].us);
  if (!against.empty()) fastest.words += ", against " + against;
  return fastest;
}

}  // namespace paddle::kernels::onednn
