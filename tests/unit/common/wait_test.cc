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
