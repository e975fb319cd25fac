#pragma once
// StopPolicy: how the supervisor stops processes. A stop sends SIGTERM to the process group of
// each of its processes still running, and SIGKILL to those still running once the grace period
// has passed; a stop whose processes have all exited is over, and no SIGKILL follows. A kill
// (the launcher signalled a second time) sends SIGKILL at once. A process that outlives its
// SIGKILL by kUnkillableBound (uninterruptible sleep: a hung disk, a frozen cgroup) is named,
// with its state, and given up on, so that a stop ends within the grace period plus the bound. The escapees (the processes that
// left their groups, orphan_guard.h) get SIGTERM from a stop of the whole job, and SIGKILL from a
// kill that leaves no other process running.
//
// The processes and the clock are interfaces, so that tests drive a stop with fakes; the
// supervisor's are its process slots (process_slot.h) and its io_context's timer
// (timer_stop_clock.h).

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/console/launch_log.h"

namespace paddle::launcher {

// A process as a stop sees it: its process group to signal, and whether it still runs.
class StoppableProcess {
 public:
  virtual ~StoppableProcess() = default;
  virtual bool running() const = 0;
  // Sends `sig` to the process group; harmless once the group is gone.
  virtual void signal_group(int sig) = 0;
  // "trainer 3 (local 1, pid 4242)", for the log.
  virtual std::string name() const = 0;
  // Why it may outlive a SIGKILL, for the log: "in uninterruptible sleep (D) in io_schedule".
  virtual std::string state() const { return ""; }
  // The stop gives up on it, alive past its SIGKILL: from now on it counts as ended, killed.
  virtual void abandon() {}
};

// The clock a grace period is measured on, with the one alarm a StopPolicy keeps.
class StopClock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~StopClock() = default;
  virtual TimePoint now() const = 0;
  // Calls `ring` once `when` has come, unless the alarm is set again or cancelled first.
  virtual void set_alarm(TimePoint when, std::function<void()> ring) = 0;
  virtual void cancel_alarm() = 0;
};

class StopPolicy {
 public:
  using Processes = std::vector<StoppableProcess*>;
  // Sends a signal to the escapees; empty where nothing guards them.
  using EscapeeSignal = std::function<void(int sig)>;
  static constexpr std::chrono::seconds kUnkillableBound{5};

  StopPolicy(StopClock& clock, std::chrono::milliseconds grace_period, LaunchLog& log, EscapeeSignal signal_escapees = {});

  // Stops the whole job: `all` its processes and the escapees. Returns the processes signalled.
  Processes stop_all(const Processes& all);
  // Stops `part` (one role, at the end of a PS job) and leaves `rest` running. Returns the
  // processes signalled.
  Processes stop_part(const Processes& part, const Processes& rest);
  // SIGKILL now to every process still running and the escapees, saying `why`; a stop's grace
  // period runs on (its SIGKILL then finds nothing left).
  void kill_all(const Processes& all, std::string_view why);

  // A process exited: once none of the stop's runs, the stop is over.
  void process_exited();
  // Whether a stop waits for its processes to exit, with a SIGKILL due when the grace period ends.
  bool stopping() const { return !part_.empty(); }
  // The attempt is over: no SIGKILL follows, and the processes are forgotten.
  void end();

 private:
  Processes send_term(const Processes& part);
  // Arms the SIGKILL of `part` for when the grace period has passed, if a SIGTERM went out.
  void await_exit(const Processes& part, const Processes& rest, const Processes& signalled);
  void kill(const Processes& part, const Processes& rest, std::string_view why);
  // Gives up on those of `killed` still running kUnkillableBound after their SIGKILL.
  void await_death(const Processes& killed);

  StopClock& clock_;
  std::chrono::milliseconds grace_period_;
  LaunchLog& log_;
  EscapeeSignal signal_escapees_;
  // The stop whose SIGKILL is due: its processes, and the rest, whose running spares the escapees.
  Processes part_, rest_;
  uint64_t stops_ = 0;  // stops begun or ended: the alarm of an earlier one is stale
};

}  // namespace paddle::launcher
