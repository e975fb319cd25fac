#include <doctest/doctest.h>

#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launcher/supervise/stop_policy.h"

using namespace paddle::launcher;
using namespace std::chrono_literals;

namespace {

// A clock that moves only when the test says, ringing the alarm when its time comes.
class FakeClock : public StopClock {
 public:
  TimePoint now() const override { return now_; }
  void set_alarm(TimePoint when, std::function<void()> ring) override {
    last_ring = ring;
    alarm_.emplace(when, std::move(ring));
  }
  void cancel_alarm() override { alarm_.reset(); }

  void advance(std::chrono::milliseconds by) {
    now_ += by;
    if (alarm_ && alarm_->first <= now_) std::exchange(alarm_, std::nullopt)->second();
  }
  bool alarm_set() const { return alarm_.has_value(); }
  // The last alarm set, which a test rings late, as an asio timer whose wait completed before
  // it was cancelled still does.
  std::function<void()> last_ring;
  std::chrono::milliseconds since_start(TimePoint t) const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t - TimePoint{});
  }

 private:
  TimePoint now_{};
  std::optional<std::pair<TimePoint, std::function<void()>>> alarm_;
};

struct Signal {
  int sig;
  std::chrono::milliseconds at;  // on the fake clock, from its start
  bool operator==(const Signal&) const = default;
};

// A process that records the signals it got and exits when the test says (a SIGKILL ends it).
class FakeProcess : public StoppableProcess {
 public:
  FakeProcess(const FakeClock& clock, std::string name) : clock_(clock), name_(std::move(name)) {}

  bool running() const override { return running_; }
  void signal_group(int sig) override {
    signals.push_back({sig, clock_.since_start(clock_.now())});
    if (sig == SIGKILL) running_ = false;
  }
  std::string name() const override { return name_; }

  void exit() { running_ = false; }

  std::vector<Signal> signals;

 private:
  const FakeClock& clock_;
  std::string name_;
  bool running_ = true;
};

// The log's lines, read back from a temporary file.
struct CapturedLog {
  std::FILE* file = std::tmpfile();
  LaunchLog log{file};

  ~CapturedLog() { std::fclose(file); }
  std::string text() {
    std::fflush(file);
    std::rewind(file);
    std::string out;
    for (int c; (c = std::fgetc(file)) != EOF;) out.push_back(static_cast<char>(c));
    return out;
  }
};

struct Scene {
  FakeClock clock;
  CapturedLog log;
  std::vector<int> escapee_signals;
  StopPolicy policy{clock, 5000ms, log.log, [this](int sig) { escapee_signals.push_back(sig); }};
};

}  // namespace

TEST_CASE("stop policy: a process that exits within the grace period gets SIGTERM only, and the stop ends at its exit") {
  Scene s;
  FakeProcess trainer(s.clock, "trainer 0 (local 0, pid 100)");
  const auto signalled = s.policy.stop_all({&trainer});
  CHECK(signalled == StopPolicy::Processes{&trainer});
  CHECK(trainer.signals == std::vector<Signal>{{SIGTERM, 0ms}});
  CHECK(s.escapee_signals == std::vector<int>{SIGTERM});
  CHECK(s.policy.stopping());
  s.clock.advance(3000ms);
  trainer.exit();
  s.policy.process_exited();
  CHECK_FALSE(s.policy.stopping());
  CHECK_FALSE(s.clock.alarm_set());  // the SIGKILL is called off at the exit, not at the deadline
  s.clock.advance(10s);
  CHECK(trainer.signals == std::vector<Signal>{{SIGTERM, 0ms}});
  CHECK(s.escapee_signals == std::vector<int>{SIGTERM});
  CHECK(s.log.text().find("sent SIGTERM to trainer 0 (local 0, pid 100); waiting up to 5s for them to exit before SIGKILL") !=
        std::string::npos);
}

TEST_CASE("stop policy: a stop ends only when the last of its processes exits") {
  Scene s;
  FakeProcess a(s.clock, "trainer 0"), b(s.clock, "trainer 1");
  s.policy.stop_all({&a, &b});
  s.clock.advance(1000ms);
  a.exit();
  s.policy.process_exited();
  CHECK(s.policy.stopping());
  s.clock.advance(4000ms);  // the grace period is over: b, still running, is killed
  CHECK(a.signals == std::vector<Signal>{{SIGTERM, 0ms}});
  CHECK(b.signals == std::vector<Signal>{{SIGTERM, 0ms}, {SIGKILL, 5000ms}});
  CHECK_FALSE(s.policy.stopping());
}

TEST_CASE("stop policy: SIGTERM, then SIGKILL exactly when the grace period has passed") {
  Scene s;
  FakeProcess server(s.clock, "server 0 (local 0, pid 200)");
  s.clock.advance(250ms);  // the stop starts later than the clock
  s.policy.stop_all({&server});
  s.clock.advance(4999ms);
  CHECK(server.signals == std::vector<Signal>{{SIGTERM, 250ms}});
  CHECK(s.escapee_signals == std::vector<int>{SIGTERM});
  s.clock.advance(1ms);
  CHECK(server.signals == std::vector<Signal>{{SIGTERM, 250ms}, {SIGKILL, 5250ms}});
  CHECK(s.escapee_signals == std::vector<int>{SIGTERM, SIGKILL});
  CHECK_FALSE(s.policy.stopping());
  CHECK(s.log.text().find("server 0 (local 0, pid 200) did not exit within the grace period: sending SIGKILL to its "
                          "process group") != std::string::npos);
}

TEST_CASE("stop policy: a second signal kills at once, without waiting for the grace period") {
  Scene s;
  FakeProcess a(s.clock, "trainer 0"), b(s.clock, "trainer 1");
  s.policy.stop_all({&a, &b});
  s.clock.advance(100ms);
  b.exit();
  s.policy.kill_all({&a, &b}, "second signal");
  CHECK(a.signals == std::vector<Signal>{{SIGTERM, 0ms}, {SIGKILL, 100ms}});
  CHECK(b.signals == std::vector<Signal>{{SIGTERM, 0ms}});  // gone already: not signalled again
  CHECK(s.escapee_signals == std::vector<int>{SIGTERM, SIGKILL});
  CHECK(s.log.text().find("trainer 0 second signal: sending SIGKILL to its process group") != std::string::npos);
}

TEST_CASE("stop policy: stopping one role leaves the rest, and the escapees, alone until none of the rest runs") {
  Scene s;
  FakeProcess server(s.clock, "server 0"), heter(s.clock, "heter_worker 0");
  s.policy.stop_part({&heter}, {&server});
  CHECK(heter.signals == std::vector<Signal>{{SIGTERM, 0ms}});
  CHECK(server.signals.empty());
  CHECK(s.escapee_signals.empty());  // a part's stop sends them no SIGTERM
  s.clock.advance(5000ms);
  CHECK(heter.signals == std::vector<Signal>{{SIGTERM, 0ms}, {SIGKILL, 5000ms}});
  CHECK(server.signals.empty());
  CHECK(s.escapee_signals.empty());  // the server still runs: the escapees may be its
  // The servers' own stop, once the last of them is killed, takes the escapees along.
  s.policy.stop_part({&server}, {&heter});
  s.clock.advance(5000ms);
  CHECK(server.signals == std::vector<Signal>{{SIGTERM, 5000ms}, {SIGKILL, 10000ms}});
  CHECK(s.escapee_signals == std::vector<int>{SIGKILL});
}

TEST_CASE("stop policy: a later stop restarts the grace period; a stop with nothing running leaves the earlier one's") {
  Scene s;
  FakeProcess a(s.clock, "trainer 0"), b(s.clock, "trainer 1");
  s.policy.stop_part({&a}, {&b});
  s.clock.advance(3000ms);
  s.policy.stop_all({&a, &b});  // the launcher is signalled meanwhile: everything gets SIGTERM, a again
  s.clock.advance(4999ms);
  CHECK(a.signals == std::vector<Signal>{{SIGTERM, 0ms}, {SIGTERM, 3000ms}});
  s.clock.advance(1ms);
  CHECK(a.signals == std::vector<Signal>{{SIGTERM, 0ms}, {SIGTERM, 3000ms}, {SIGKILL, 8000ms}});
  CHECK(b.signals == std::vector<Signal>{{SIGTERM, 3000ms}, {SIGKILL, 8000ms}});

  Scene t;
  FakeProcess c(t.clock, "trainer 2"), gone(t.clock, "trainer 3");
  gone.exit();
  t.policy.stop_all({&c});
  t.clock.advance(2000ms);
  CHECK(t.policy.stop_part({&gone}, {&c}).empty());
  t.clock.advance(3000ms);
  CHECK(c.signals == std::vector<Signal>{{SIGTERM, 0ms}, {SIGKILL, 5000ms}});
  CHECK(gone.signals.empty());
}

TEST_CASE("stop policy: the attempt's end calls off a pending SIGKILL") {
  Scene s;
  FakeProcess a(s.clock, "trainer 0");
  s.policy.stop_all({&a});
  s.policy.end();
  CHECK_FALSE(s.policy.stopping());
  s.clock.advance(1h);
  CHECK(a.signals == std::vector<Signal>{{SIGTERM, 0ms}});
}

TEST_CASE("stop policy: an alarm that rings after its stop ended, or was replaced, kills nothing of a later stop") {
  Scene s;
  FakeProcess old_trainer(s.clock, "trainer 0"), server(s.clock, "server 0");
  s.policy.stop_part({&old_trainer}, {&server});
  const std::function<void()> stale = s.clock.last_ring;
  s.policy.end();  // the attempt ended; its alarm's wait had completed already
  s.clock.advance(5000ms);
  stale();
  CHECK(old_trainer.signals == std::vector<Signal>{{SIGTERM, 0ms}});
  CHECK(s.escapee_signals.empty());  // a server still runs: the escapees were never the stop's

  FakeProcess a(s.clock, "trainer 1"), b(s.clock, "trainer 2");
  s.policy.stop_all({&a});
  const std::function<void()> replaced = s.clock.last_ring;
  s.clock.advance(1000ms);
  s.policy.stop_all({&b});  // a new stop: its own grace period
  replaced();
  CHECK(b.signals == std::vector<Signal>{{SIGTERM, 6000ms}});
  s.clock.advance(5000ms);
  CHECK(b.signals == std::vector<Signal>{{SIGTERM, 6000ms}, {SIGKILL, 11000ms}});
}

namespace {

// A process the kernel holds in uninterruptible sleep: no signal ends it.
class UnkillableProcess : public FakeProcess {
 public:
  using FakeProcess::FakeProcess;
  bool running() const override { return !abandoned; }
  std::string state() const override { return "in uninterruptible sleep (D) in io_schedule"; }
  void abandon() override { abandoned = true; }
  bool abandoned = false;
};

}  // namespace

TEST_CASE("stop policy: a process alive past its SIGKILL is named and given up on within the grace period plus the bound") {
  Scene s;
  UnkillableProcess stuck(s.clock, "trainer 1 (local 1, pid 101)");
  FakeProcess other(s.clock, "trainer 0 (local 0, pid 100)");
  s.policy.stop_all({&other, &stuck});
  s.clock.advance(5000ms);  // the grace period: SIGKILL to both; the other dies
  CHECK(stuck.signals == std::vector<Signal>{{SIGTERM, 0ms}, {SIGKILL, 5000ms}});
  CHECK_FALSE(other.running());
  s.clock.advance(std::chrono::milliseconds(StopPolicy::kUnkillableBound) - 1ms);
  CHECK_FALSE(stuck.abandoned);
  s.clock.advance(1ms);
  CHECK(stuck.abandoned);
  CHECK(s.log.text().find("trainer 1 (local 1, pid 101) is still alive 5 s after SIGKILL, in uninterruptible sleep (D) in "
                          "io_schedule: the kernel holds it") != std::string::npos);
}

TEST_CASE("stop policy: a second signal's kill gives up on the unkillable within the bound too") {
  Scene s;
  UnkillableProcess stuck(s.clock, "trainer 0 (local 0, pid 100)");
  s.policy.kill_all({&stuck}, "second signal");
  s.clock.advance(std::chrono::milliseconds(StopPolicy::kUnkillableBound));
  CHECK(stuck.abandoned);
}
