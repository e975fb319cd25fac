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

std::vector<double> race(const std::vector<std::function<void()>>& ways, int rounds) {
  Race race(ways.size(), rounds);
  while (!race.decided()) {
    const auto start = std::chrono::steady_clock::now();
    ways[race.next()]();
    race.record(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  return race.best_us();
}

OpTiming time_op(const std::function<void()>& forward, const std::function<void()>& backward, int runs) {
  OpTiming t;
  t.forward_us = fastest_us(forward, runs);
  t.backward_us = fastest_us(backward, runs);
  return t;
}

Decision choose_faster(const OpTiming& ours, const OpTiming& library) {
  const bool ours_faster = ours.total_us() <= library.total_us();
  const OpTiming& chosen = ours_faster ? ours : library;
  const OpTiming& other = ours_faster ? library : ours;
  return Decision{ours_faster ? 0u : 1u,
                  fmt::format("{}, {:.0f} + {:.0f} us forward + backward, against {} {:.0f} + {:.0f} us",
                              ours_faster ? "ours" : "oneDNN's", chosen.forward_us, chosen.backward_us,
                              ours_faster ? "oneDNN's" : "ours", other.forward_us, other.backward_us)};
}

Decision fastest_way(const std::vector<TimedWay>& ways) {
  Decision fastest;
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
