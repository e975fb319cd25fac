#include "kernels/onednn/kernel_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>

namespace paddle::kernels::onednn {
namespace {

double elapsed_us(const std::function<void()>& call) {
  const auto start = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

double fastest_us(const std::function<void()>& call, int runs) {
  call();
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < runs; ++i) best = std::min(best, elapsed_us(call));
  return best;
}

}  // namespace

std::vector<double> race(const std::vector<std::function<void()>>& ways, int rounds, const CallTimer& timer) {
  constexpr double kClearLoser = 1.25;
  const CallTimer time = timer ? timer : CallTimer(elapsed_us);
  for (const auto& way : ways) way();
  std::vector<double> best(ways.size(), std::numeric_limits<double>::infinity());
  std::vector<bool> running(ways.size(), true);
  for (int round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < ways.size(); ++i)
      if (running[i]) best[i] = std::min(best[i], time(ways[i]));
    const double leader = *std::min_element(best.begin(), best.end());
    for (size_t i = 0; i < ways.size(); ++i) running[i] = running[i] && best[i] <= kClearLoser * leader;
    if (std::count(running.begin(), running.end(), true) < 2) break;  // the leader alone: decided
  }
  return best;
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
