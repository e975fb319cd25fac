#include "launcher/supervise/hang_watch.h"

#include <algorithm>

namespace paddle::launcher {
namespace {

bool made_progress(const ProcessSigns& before, const ProcessSigns& now, double seconds) {
  if (now.log_bytes != before.log_bytes) return true;
  if (now.page.has_value() != before.page.has_value()) return true;
  if (now.page && now.page->marks != before.page->marks) return true;
  const bool waiting = now.page && common::waits_on_others(now.page->phase);
  const double used = now.cpu_seconds - before.cpu_seconds;
  return used > 0 && used >= HangWatch::kComputingShare * seconds && !waiting;
}

bool serving(const ProcessSigns& s) {
  return s.page && (s.page->phase == common::Phase::kServing || s.page->phase == common::Phase::kFinished);
}

}  // namespace

HangWatch::HangWatch(std::optional<std::chrono::milliseconds> timeout, std::vector<bool> servers, Clock::time_point start)
    : timeout_(timeout), servers_(std::move(servers)), seen_(servers_.size(), Seen{std::nullopt, start, start}) {}

bool HangWatch::going(size_t i, Clock::time_point now, std::chrono::milliseconds timeout) const {
  return now - seen_[i].changed < std::min<Clock::duration>(kQuietNow, timeout / 2);
}

bool HangWatch::waits_for_peers(size_t i) const {
  const auto& page = seen_[i].last->page;
  return !page || page->phase == common::Phase::kCollective;
}

bool HangWatch::someone_going(size_t except, Clock::time_point now, std::chrono::milliseconds timeout) const {
  for (size_t i = 0; i < seen_.size(); ++i)
    if (i != except && timeout_of(i) && going(i, now, timeout)) return true;
  return false;
}

bool HangWatch::any_covered() const {
  return std::ranges::any_of(seen_, [](const Seen& s) { return s.covered && !s.exited; });
}

std::vector<double> HangWatch::quiet_seconds(Clock::time_point now) const {
  std::vector<double> quiet;
  for (const Seen& s : seen_) quiet.push_back(s.exited ? -1.0 : std::chrono::duration<double>(now - s.changed).count());
  return quiet;
}

std::optional<std::chrono::milliseconds> HangWatch::timeout_of(size_t i) const {
  const Seen& s = seen_[i];
  if (s.exited || !s.last || servers_[i] || serving(*s.last)) return std::nullopt;
  if (timeout_) return timeout_;
  if (!s.last->page) return std::nullopt;
  const auto adapted = std::chrono::milliseconds(static_cast<long>(s.longest_step * kAutomaticSteps * 1000));
  return std::max<std::chrono::milliseconds>(kAutomaticFloor, adapted);
}

std::optional<Hang> HangWatch::observe(Clock::time_point now, const std::vector<std::optional<ProcessSigns>>& signs) {
  for (size_t i = 0; i < seen_.size() && i < signs.size(); ++i) {
    Seen& s = seen_[i];
    if (!signs[i]) {
      s.exited = true;
      continue;
    }
    if (!s.last || made_progress(*s.last, *signs[i], std::chrono::duration<double>(now - s.read).count())) {
      s.changed = now;
      s.covered = false;
    }
    if (signs[i]->page) s.longest_step = std::max(s.longest_step, signs[i]->page->step_seconds);
    s.last = signs[i];
    s.read = now;
  }
  std::optional<Hang> hang;
  for (size_t i = 0; i < seen_.size(); ++i) {
    const auto timeout = timeout_of(i);
    if (!timeout || seen_[i].covered || now - seen_[i].changed < *timeout) continue;
    if (waits_for_peers(i) && someone_going(i, now, *timeout)) continue;
    if (!hang || now - seen_[i].changed > now - seen_[hang->process].changed) hang = Hang{i, *timeout};
  }
  if (hang)
    for (size_t i = 0; i < seen_.size(); ++i)
      if (!seen_[i].exited && !going(i, now, hang->timeout)) seen_[i].covered = true;
  return hang;
}

}  // namespace paddle::launcher
