#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "common/wait.h"
#include "launcher/supervise/stop_signals.h"

using namespace paddle::launcher;
using namespace std::chrono_literals;

namespace {

// Sends `sig` to this process (as kill(1) does: the signals' thread takes it) and waits until
// `signals` has seen it.
void send_and_wait(const StopSignals& signals, int sig, const std::atomic<int>& told, int expect_told) {
  REQUIRE(::kill(::getpid(), sig) == 0);
  REQUIRE(paddle::common::wait_until(5s, [&] { return signals.first() != 0 && told.load() >= expect_told; }, 1ms));
}

}  // namespace

TEST_CASE("stop signals: the first signal stops the token, each subscriber hears it, and a wait's Stopped names the wait") {
  StopSignals signals;
  std::atomic<int> told = 0, last = 0;
  auto subscription = signals.subscribe([&](int sig) {
    last = sig;
    ++told;
  });
  CHECK_FALSE(signals.stop_token().stop_requested());
  CHECK_NOTHROW(signals.throw_if_stopped("waiting for nothing"));

  // A waiter asleep on the token wakes at the signal, not at the end of its sleep.
  std::atomic<bool> slept_it_all = true;
  std::thread sleeper([&] { slept_it_all = paddle::common::sleep_for(60s, signals.stop_token()); });
  const auto sent = std::chrono::steady_clock::now();
  send_and_wait(signals, SIGTERM, told, 1);
  sleeper.join();
  CHECK(std::chrono::steady_clock::now() - sent < 5s);
  CHECK_FALSE(slept_it_all.load());

  CHECK(signals.first() == SIGTERM);
  CHECK(signals.stop_token().stop_requested());
  CHECK(last == SIGTERM);
  try {
    signals.throw_if_stopped("waiting for 1 of 2 nodes");
    FAIL("no Stopped thrown");
  } catch (const Stopped& e) {
    CHECK(e.exit_code() == 143);
    CHECK(e.signal() == SIGTERM);
    CHECK(std::string(e.what()) == "received SIGTERM while waiting for 1 of 2 nodes; stopped, nothing was left running");
  }

  // A second signal (SIGINT) goes to the subscribers; the stop stays the first's.
  REQUIRE(::kill(::getpid(), SIGINT) == 0);
  REQUIRE(paddle::common::wait_until(5s, [&] { return told.load() == 2; }, 1ms));
  CHECK(last == SIGINT);
  CHECK(signals.first() == SIGTERM);

  // A subscriber that comes later hears the first at once; an ended subscription hears nothing.
  int late = 0;
  auto late_subscription = signals.subscribe([&](int sig) { late = sig; });
  CHECK(late == SIGTERM);
  subscription.reset();
  late_subscription.reset();
  REQUIRE(::kill(::getpid(), SIGINT) == 0);
  std::this_thread::sleep_for(100ms);
  CHECK(told == 2);
  CHECK(late == SIGTERM);
}

TEST_CASE("stop signals: a sleep on a token nobody stops lasts its whole time") {
  std::stop_source never;
  const auto start = std::chrono::steady_clock::now();
  CHECK(paddle::common::sleep_for(50ms, never.get_token()));
  CHECK(std::chrono::steady_clock::now() - start >= 50ms);
}
