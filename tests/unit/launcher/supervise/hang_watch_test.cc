#include "launcher/supervise/hang_watch.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include "launcher/supervise/process_signs.h"

namespace paddle::launcher {
namespace {

using namespace std::chrono_literals;
using Signs = std::vector<std::optional<ProcessSigns>>;

ProcessSigns at(unsigned long long cpu, unsigned long long log, char state = 'S') { return {cpu, log, state}; }

TEST_CASE("no verdict while any process makes progress; one, naming who went quiet first, once all are quiet") {
  const auto t0 = HangWatch::Clock::now();
  HangWatch watch(5000ms, 3, t0);
  CHECK_FALSE(watch.observe(t0, {at(1, 1), at(1, 1), at(1, 1)}));
  CHECK_FALSE(watch.observe(t0 + 2s, {at(2, 1), at(2, 1), at(1, 1)}));  // process 2 goes quiet at 0 s
  CHECK_FALSE(watch.observe(t0 + 4s, {at(2, 9), at(2, 1), at(1, 1)}));  // process 0 writes: not a hang
  CHECK_FALSE(watch.observe(t0 + 8s, {at(2, 9), at(2, 1), at(1, 1)}));  // 0 quiet 4 s: not yet
  const auto verdict = watch.observe(t0 + 9s, {at(2, 9), at(2, 1), at(1, 1)});
  REQUIRE(verdict);
  REQUIRE(verdict->culprit);
  CHECK(*verdict->culprit == 2);
  CHECK(verdict->why == "it went quiet 2 s before the others, which wait for it");
  CHECK(verdict->quiet_seconds == std::vector<double>{5, 7, 9});
  CHECK_FALSE(watch.observe(t0 + 20s, {at(2, 9), at(2, 1), at(1, 1)}));  // said once
  CHECK_FALSE(watch.observe(t0 + 21s, {at(3, 9), at(2, 1), at(1, 1)}));  // progress again
  CHECK(watch.observe(t0 + 27s, {at(3, 9), at(2, 1), at(1, 1)}));        // and a new hang is a new verdict
}

TEST_CASE("a stopped process, then one in uninterruptible sleep, is the culprit whoever went quiet first") {
  const auto t0 = HangWatch::Clock::now();
  HangWatch watch(1000ms, 3, t0);
  watch.observe(t0, {at(1, 1), at(1, 1, 'D'), at(1, 1)});
  watch.observe(t0 + 1s, {at(1, 1), at(2, 1, 'D'), at(2, 1, 'T')});
  auto verdict = watch.observe(t0 + 3s, {at(1, 1), at(2, 1, 'D'), at(2, 1, 'T')});
  REQUIRE(verdict);
  CHECK(*verdict->culprit == 2);
  CHECK(verdict->why == "it is stopped (SIGSTOP)");
  HangWatch d(1000ms, 2, t0);
  d.observe(t0, {at(1, 1), at(1, 1, 'D')});
  verdict = d.observe(t0 + 2s, {at(1, 1), at(1, 1, 'D')});
  REQUIRE(verdict);
  CHECK(*verdict->culprit == 1);
  CHECK(verdict->why == "it is in uninterruptible sleep (D)");
}

TEST_CASE("processes that went quiet together name nobody; exited ones are left out, and none left is no hang") {
  const auto t0 = HangWatch::Clock::now();
  HangWatch watch(1000ms, 3, t0);
  watch.observe(t0, {at(1, 1), at(1, 1), std::nullopt});
  const auto verdict = watch.observe(t0 + 2s, {at(1, 1), at(1, 1), std::nullopt});
  REQUIRE(verdict);
  CHECK_FALSE(verdict->culprit);
  CHECK(verdict->quiet_seconds == std::vector<double>{2, 2, -1});
  HangWatch gone(1000ms, 1, t0);
  CHECK_FALSE(gone.observe(t0 + 5s, {std::nullopt}));
}

TEST_CASE("this process's own signs: its state and CPU time from /proc; a gone one has none") {
  const auto me = read_process_signs(::getpid(), "/nonexistent");
  REQUIRE(me);
  CHECK(me->state == 'R');
  CHECK(me->log_bytes == 0);
  CHECK_FALSE(read_process_signs(999999999, "/nonexistent"));
  CHECK(describe_process_state('T') == "stopped (SIGSTOP)");
}

}  // namespace
}  // namespace paddle::launcher
