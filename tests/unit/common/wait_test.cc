#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "common/error.h"
#include "common/wait.h"

using namespace paddle::common;
using namespace std::chrono_literals;

namespace {

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string text;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) text.append(buf, n);
  return text;
}

}  // namespace

TEST_CASE("waiting reports the missing peers in Paddle's words, then succeeds") {
  std::FILE* report = std::tmpfile();
  WaitOptions o;
  o.timeout = 5s;
  o.report_interval = 30ms;
  o.poll_interval = 10ms;
  o.report_to = report;
  int calls = 0;
  wait_until_ready(
      o,
      [&]() -> std::vector<std::string> {
        if (++calls < 8) return {"127.0.0.1:6171", "127.0.0.1:6172"};
        return {};
      },
      [](const auto&) { return std::string("unused"); });
  CHECK(calls == 8);
  const std::string text = read_all(report);
  CHECK(text.find("server not ready, wait 3 sec to retry...\nnot ready endpoints:[127.0.0.1:6171, 127.0.0.1:6172]") !=
        std::string::npos);
  std::fclose(report);
}

TEST_CASE("waiting gives up at the deadline with the caller's message") {
  WaitOptions o;
  o.timeout = 60ms;
  o.poll_interval = 5ms;
  o.report_to = std::tmpfile();
  CHECK_THROWS_WITH_AS(
      wait_until_ready(
          o, [] { return std::vector<std::string>{"10.0.0.9:1"}; },
          [](const std::vector<std::string>& missing) { return "gone: " + missing.front(); }),
      "gone: 10.0.0.9:1", TimeoutError);
  std::fclose(o.report_to);
}

TEST_CASE("wait_until: true once done, false at the timeout") {
  int n = 0;
  CHECK(wait_until(1s, [&] { return ++n == 3; }, 1ms));
  CHECK(n == 3);
  CHECK_FALSE(wait_until(20ms, [] { return false; }, 1ms));
}

TEST_CASE("retry_until: what throws Retried is tried again after the pause; false is tried at once; Fatal and the "
          "rest go through; it gives up at the deadline or the stop") {
  using namespace std::chrono_literals;
  using Clock = std::chrono::steady_clock;
  struct Flaky : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  struct Refused : Flaky {
    using Flaky::Flaky;
  };
  int calls = 0;
  const auto start = Clock::now();
  CHECK(paddle::common::retry_until<Flaky>(start + 5s, 20ms, [&] {
    if (++calls < 3) throw Flaky("not up yet");
    return true;
  }));
  CHECK(calls == 3);
  CHECK(Clock::now() - start >= 40ms);  // two pauses

  calls = 0;
  CHECK(paddle::common::retry_until<Flaky>(Clock::now() + 5s, 1s, [&] { return ++calls == 4; }));
  CHECK(calls == 4);  // no pause after a false: the attempt waited itself

  calls = 0;
  const auto before = Clock::now();
  CHECK_FALSE(paddle::common::retry_until<Flaky>(before + 60ms, 10ms, [&]() -> bool {
    ++calls;
    throw Flaky("down");
  }));
  CHECK(Clock::now() - before < 1s);
  CHECK(calls >= 2);

  CHECK_THROWS_AS((paddle::common::retry_until<Flaky, Refused>(Clock::now() + 5s, 1ms, []() -> bool { throw Refused("no"); })),
                  Refused);
  CHECK_THROWS_AS(paddle::common::retry_until<Flaky>(Clock::now() + 5s, 1ms, []() -> bool { throw std::logic_error("bug"); }),
                  std::logic_error);
  calls = 0;
  CHECK_FALSE(paddle::common::retry_until<Flaky>(
      Clock::now() + 5s, 1ms, [&] { return ++calls < 0; }, [&] { return calls == 2; }));
  CHECK(calls == 2);  // stopped
}
