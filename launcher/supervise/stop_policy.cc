#include "launcher/supervise/stop_policy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <csignal>
#include <utility>

namespace paddle::launcher {

StopPolicy::StopPolicy(StopClock& clock, std::chrono::milliseconds grace_period, LaunchLog& log,
                       EscapeeSignal signal_escapees)
    : clock_(clock), grace_period_(grace_period), log_(log), signal_escapees_(std::move(signal_escapees)) {}

StopPolicy::Processes StopPolicy::stop_all(const Processes& all) {
  Processes signalled = send_term(all);
  if (signal_escapees_) signal_escapees_(SIGTERM);
  await_exit(all, {}, signalled);
  return signalled;
}

StopPolicy::Processes StopPolicy::stop_part(const Processes& part, const Processes& rest) {
  Processes signalled = send_term(part);
  await_exit(part, rest, signalled);
  return signalled;
}

StopPolicy::Processes StopPolicy::send_term(const Processes& part) {
  Processes signalled;
  for (StoppableProcess* p : part) {
    if (!p->running()) continue;
    p->signal_group(SIGTERM);
    signalled.push_back(p);
  }
  return signalled;
}

void StopPolicy::await_exit(const Processes& part, const Processes& rest, const Processes& signalled) {
  // With nothing to wait for, an earlier stop's grace period runs on.
  if (signalled.empty()) return;
  std::vector<std::string> names;
  for (const StoppableProcess* p : signalled) names.push_back(p->name());
  log_.info(fmt::format("sent SIGTERM to {}; waiting up to {:.3g}s for them to exit before SIGKILL", fmt::join(names, ", "),
                        grace_period_.count() / 1000.0));
  part_ = part;
  rest_ = rest;
  // An alarm whose time came just as its stop was replaced or ended may still ring (an asio
  // timer cannot take back a wait that completed): it finds its stop gone and does nothing.
  const uint64_t stop = ++stops_;
  clock_.set_alarm(clock_.now() + grace_period_, [this, stop] {
    if (stop != stops_ || part_.empty()) return;
    const Processes due = std::exchange(part_, {});
    const Processes rest = std::exchange(rest_, {});
    kill(due, rest, "did not exit within the grace period");
    await_death(due);
  });
}

void StopPolicy::kill_all(const Processes& all, std::string_view why) {
  kill(all, {}, why);
  await_death(all);
}

void StopPolicy::await_death(const Processes& killed) {
  Processes alive;
  for (StoppableProcess* p : killed)
    if (p->running()) alive.push_back(p);
  if (alive.empty()) return;
  const uint64_t stop = ++stops_;
  clock_.set_alarm(clock_.now() + kUnkillableBound, [this, stop, alive] {
    if (stop != stops_) return;
    for (StoppableProcess* p : alive) {
      if (!p->running()) continue;
      const std::string state = p->state();
      log_.error(fmt::format("{} is still alive {} s after SIGKILL{}: the kernel holds it (a hung disk or network "
                             "filesystem, a frozen cgroup) and no signal reaches it; no longer waiting for it, it "
                             "ends when the kernel lets it go",
                             p->name(), kUnkillableBound.count(), state.empty() ? "" : ", " + state));
      p->abandon();
    }
  });
}

void StopPolicy::kill(const Processes& part, const Processes& rest, std::string_view why) {
  for (StoppableProcess* p : part) {
    if (!p->running()) continue;
    log_.warning(fmt::format("{} {}: sending SIGKILL to its process group", p->name(), why));
    p->signal_group(SIGKILL);
  }
  // The escapees belong to no process: they go once no process outside the kill runs.
  const bool others_run = std::any_of(rest.begin(), rest.end(), [](const StoppableProcess* p) { return p->running(); });
  if (signal_escapees_ && !others_run) signal_escapees_(SIGKILL);
}

void StopPolicy::process_exited() {
  if (part_.empty() || std::any_of(part_.begin(), part_.end(), [](const StoppableProcess* p) { return p->running(); })) return;
  end();
}

void StopPolicy::end() {
  ++stops_;
  clock_.cancel_alarm();
  part_.clear();
  rest_.clear();
}

}  // namespace paddle::launcher
