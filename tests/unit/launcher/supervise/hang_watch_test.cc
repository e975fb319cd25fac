#include "launcher/supervise/hang_watch.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include "launcher/supervise/process_signs.h"

namespace paddle::launcher {
namespace {

using namespace std::chrono_literals;
using common::Phase;
using Signs = std::vector<std::optional<ProcessSigns>>;

// `cpu`: CPU seconds used so far.
ProcessSigns at(double cpu, unsigned long long log, char state = 'S') { return {cpu, log, state, std::nullopt}; }

// A process of our runtime: its page's marks, phase and last step's seconds.
ProcessSigns paged(double cpu, uint64_t marks, Phase phase, double step_seconds = 0.01) {
  ProcessSigns s = at(cpu, 0);
  s.page = common::ProgressReading{};
  s.page->marks = marks;
  s.page->phase = phase;
  s.page->step_seconds = step_seconds;
  return s;
}

TEST_CASE("with --hang_timeout, programs without a page: a hang once all are quiet, reported once, until they move") {
  const auto t0 = HangWatch::Clock::now();
  HangWatch watch(5000ms, {false, false, false}, t0);
  CHECK_FALSE(watch.observe(t0, {at(1, 1), at(1, 1), at(1, 1)}));
  CHECK_FALSE(watch.observe(t0 + 2s, {at(2, 1), at(2, 1), at(1, 1)}));  // process 2 goes quiet at 0 s
  CHECK_FALSE(watch.observe(t0 + 4s, {at(2, 9), at(2, 1), at(1, 1)}));  // 0 writes, 1 goes quiet at 2 s
  // 2 has been quiet 5 s, but 0 goes on: its waits cannot be seen, so it may be waiting for 0.
  CHECK_FALSE(watch.observe(t0 + 5s, {at(2, 9), at(2, 1), at(1, 1)}));
  CHECK(watch.going(0, t0 + 5s, 5000ms));
  const auto hang = watch.observe(t0 + 7s, {at(2, 9), at(2, 1), at(1, 1)});  // 0 quiet 3 s too
  REQUIRE(hang);
  CHECK(hang->process == 2);
  CHECK(hang->timeout == 5000ms);
  CHECK(watch.quiet_seconds(t0 + 7s) == std::vector<double>{3, 5, 7});
  CHECK(watch.any_covered());
  CHECK_FALSE(watch.going(0, t0 + 7s, 5000ms));
  // Every process was quiet when the hang was reported: covered by it, no second report.
  CHECK_FALSE(watch.observe(t0 + 9s, {at(2, 9), at(2, 1), at(1, 1)}));
  CHECK_FALSE(watch.observe(t0 + 30s, {at(2, 9), at(2, 1), at(1, 1)}));
  CHECK_FALSE(watch.observe(t0 + 31s, {at(3, 9), at(3, 1), at(2, 1)}));  // all move again
  CHECK_FALSE(watch.any_covered());
  CHECK(watch.observe(t0 + 37s, {at(3, 9), at(3, 1), at(2, 1)}));  // and a new hang is a new report
}

TEST_CASE("CPU time is progress from 5% of a core: idle threads' trickle (a rank asleep in a wait) is not") {
  const auto t0 = HangWatch::Clock::now();
  HangWatch watch(4000ms, {false, false}, t0);
  watch.observe(t0, {at(1.0, 1), at(1.0, 1)});
  for (auto t = 1s; t <= 3s; t += 1s)  // 0 computes at a tenth of a core; 1's threads use 0.5% of one
    CHECK_FALSE(watch.observe(t0 + t, {at(1.0 + 0.1 * t.count(), 1), at(1.0 + 0.005 * t.count(), 1)}));
  CHECK(watch.going(0, t0 + 3s, 4000ms));
  CHECK_FALSE(watch.going(1, t0 + 3s, 4000ms));
  // 0 goes on: 1 (without a page) may be waiting for it. Once 0 only trickles, for 2 s, it is
  // not going on either: 1 is hung.
  CHECK_FALSE(watch.observe(t0 + 4s, {at(1.4, 1), at(1.02, 1)}));
  CHECK_FALSE(watch.observe(t0 + 5s, {at(1.404, 1), at(1.02, 1)}));
  const auto hang = watch.observe(t0 + 6s, {at(1.408, 1), at(1.02, 1)});
  REQUIRE(hang);
  CHECK(hang->process == 1);
  CHECK(watch.quiet_seconds(t0 + 6s) == std::vector<double>{2, 6});
}

TEST_CASE("a page's marks are progress; CPU time in a collective is not; outside one it is") {
  const auto t0 = HangWatch::Clock::now();
  HangWatch watch(3000ms, {false, false}, t0);
  watch.observe(t0, {paged(1, 1, Phase::kCompute), paged(1, 1, Phase::kCompute)});
  watch.observe(t0 + 1s, {paged(5, 2, Phase::kCollective), paged(1, 1, Phase::kEvaluation)});
  // 0 spins in its collective (CPU time moves) waiting for 1, which evaluates (CPU time moves, no
  // marks): a long evaluation, not a hang.
  for (auto t = 2s; t <= 10s; t += 1s)
    CHECK_FALSE(watch.observe(t0 + t, {paged(5 + t.count(), 2, Phase::kCollective), paged(t.count(), 1, Phase::kEvaluation)}));
  // 1 stops using CPU time in its evaluation: hung on its own, and 0 with it.
  watch.observe(t0 + 11s, {paged(20, 2, Phase::kCollective), paged(20, 1, Phase::kEvaluation)});
  CHECK_FALSE(watch.observe(t0 + 12s, {paged(21, 2, Phase::kCollective), paged(20, 1, Phase::kEvaluation)}));
  // Once 1 has been quiet half the timeout it is not going on: 0, quiet since 1 s, is the hang.
  const auto hang = watch.observe(t0 + 13s, {paged(22, 2, Phase::kCollective), paged(20, 1, Phase::kEvaluation)});
  REQUIRE(hang);
  CHECK(hang->process == 0);
  CHECK_FALSE(watch.going(1, t0 + 13s, 3000ms));
}

TEST_CASE("a worker stuck on the servers is hung while the other workers go on") {
  const auto t0 = HangWatch::Clock::now();
  HangWatch watch(3000ms, {true, false, false}, t0);
  const auto server = paged(1, 1, Phase::kServing);
  watch.observe(t0, {server, paged(1, 1, Phase::kPsPull), paged(1, 1, Phase::kCompute)});
  for (auto t = 1s; t < 3s; t += 1s)
    CHECK_FALSE(watch.observe(t0 + t, {server, paged(1, 1, Phase::kPsPull), paged(1, 1 + t.count(), Phase::kCompute)}));
  const auto hang = watch.observe(t0 + 3s, {server, paged(1, 1, Phase::kPsPull), paged(1, 9, Phase::kCompute)});
  REQUIRE(hang);
  CHECK(hang->process == 1);
  CHECK(watch.going(2, t0 + 3s, 3000ms));
}

TEST_CASE("automatic: only our runtime's processes, after the larger of 60 s and ten of their longest steps") {
  const auto t0 = HangWatch::Clock::now();
  HangWatch watch(std::nullopt, {false, false, true}, t0);
  watch.observe(t0, {paged(1, 1, Phase::kCompute, 0.5), at(1, 1), paged(1, 1, Phase::kServing)});
  CHECK(watch.timeout_of(0) == 60000ms);
  CHECK_FALSE(watch.timeout_of(1));  // another program: not watched without --hang_timeout
  CHECK_FALSE(watch.timeout_of(2));  // a server: never
  CHECK_FALSE(watch.observe(t0 + 59s, {paged(1, 1, Phase::kCompute, 0.5), at(1, 1), paged(1, 1, Phase::kServing)}));
  watch.observe(t0 + 59s, {paged(1, 2, Phase::kCompute, 9.0), at(1, 1), paged(1, 1, Phase::kServing)});  // a 9 s step
  CHECK(watch.timeout_of(0) == 90000ms);
  CHECK_FALSE(watch.observe(t0 + 59s + 89s, {paged(1, 2, Phase::kCompute, 9.0), at(1, 1), paged(1, 1, Phase::kServing)}));
  const auto hang = watch.observe(t0 + 59s + 90s, {paged(1, 2, Phase::kCompute, 9.0), at(1, 1), paged(1, 1, Phase::kServing)});
  REQUIRE(hang);
  CHECK(hang->process == 0);
  CHECK(hang->timeout == 90000ms);
}

TEST_CASE("exited processes are left out, and none left is no hang") {
  const auto t0 = HangWatch::Clock::now();
  HangWatch gone(1000ms, {false}, t0);
  CHECK_FALSE(gone.observe(t0 + 5s, {std::nullopt}));
  CHECK(gone.quiet_seconds(t0 + 5s) == std::vector<double>{-1});
}

TEST_CASE("this process's own signs: its state and CPU time from /proc; a gone one has none") {
  const auto me = read_process_signs(::getpid(), "/nonexistent");
  REQUIRE(me);
  CHECK(me->state == 'R');
  CHECK(me->log_bytes == 0);
  CHECK_FALSE(me->page);
  CHECK_FALSE(read_process_signs(999999999, "/nonexistent"));
}

}  // namespace
}  // namespace paddle::launcher
