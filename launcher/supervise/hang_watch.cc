#include "launcher/supervise/hang_watch.h"

#include <fmt/format.h>

#include <algorithm>

namespace paddle::launcher {
namespace {

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

bool made_progress(const ProcessSigns& before, const ProcessSigns& now) {
  return now.cpu_ticks != before.cpu_ticks || now.log_bytes != before.log_bytes;
}

}  // namespace

std::string describe_process_state(char state) {
  switch (state) {
    case 'R': return "running";
    case 'S': return "sleeping";
    case 'D': return "in uninterruptible sleep (D)";
    case 'T': return "stopped (SIGSTOP)";
    case 't': return "stopped by a tracer";
    case 'Z': return "a zombie";
    case 'I': return "idle";
  }
  return fmt::format("in state {}", state);
}

HangWatch::HangWatch(std::chrono::milliseconds timeout, size_t processes, Clock::time_point start)
    : timeout_(timeout), seen_(processes, Seen{std::nullopt, start, false}) {}

std::vector<double> HangWatch::quiet_seconds(Clock::time_point now) const {
  std::vector<double> quiet;
  for (const Seen& s : seen_) quiet.push_back(s.exited ? -1.0 : seconds(now - s.changed));
  return quiet;
}

std::optional<HangVerdict> HangWatch::observe(Clock::time_point now,
                                              const std::vector<std::optional<ProcessSigns>>& signs) {
  bool any_alive = false, all_quiet = true;
  for (size_t i = 0; i < seen_.size() && i < signs.size(); ++i) {
    Seen& s = seen_[i];
    if (!signs[i]) {
      s.exited = true;
      continue;
    }
    any_alive = true;
    if (!s.last || made_progress(*s.last, *signs[i])) {
      if (s.last) reported_ = false;  // progress again: a later hang is a new one
      s.changed = now;
    }
    s.last = signs[i];
    if (now - s.changed < timeout_) all_quiet = false;
  }
  if (!any_alive || !all_quiet || reported_) return std::nullopt;
  reported_ = true;

  HangVerdict v;
  v.quiet_seconds = quiet_seconds(now);
  const auto alive = [&](size_t i) { return !seen_[i].exited && seen_[i].last; };
  for (char state : {'T', 't', 'D'})
    for (size_t i = 0; i < seen_.size(); ++i)
      if (alive(i) && seen_[i].last->state == state && !v.culprit) {
        v.culprit = i;
        v.why = fmt::format("it is {}", describe_process_state(state));
      }
  if (!v.culprit) {
    std::vector<size_t> order;
    for (size_t i = 0; i < seen_.size(); ++i)
      if (alive(i)) order.push_back(i);
    std::ranges::sort(order, [&](size_t a, size_t b) { return seen_[a].changed < seen_[b].changed; });
    if (order.size() > 1 && seen_[order[1]].changed - seen_[order[0]].changed >= std::chrono::seconds(1)) {
      v.culprit = order[0];
      v.why = fmt::format("it went quiet {:.0f} s before the others, which wait for it",
                          seconds(seen_[order[1]].changed - seen_[order[0]].changed));
    } else if (order.size() == 1) {
      v.culprit = order[0];
      v.why = "it is the only process left";
    }
  }
  return v;
}

}  // namespace paddle::launcher
