#include "launcher/supervise/straggler_watch.h"

#include <doctest/doctest.h>

namespace paddle::launcher {
namespace {

std::optional<common::ProgressReading> page(double ratio, int64_t since) {
  common::ProgressReading r;
  r.straggler_ratio = ratio;
  r.straggler_since = since;
  return r;
}

TEST_CASE("the launcher says each change of a rank's verdict once, as its page shows it") {
  StragglerWatch watch(3);
  CHECK(watch.observe({page(1.0, 0), page(2.5, 0), std::nullopt}).empty());
  auto changes = watch.observe({page(1.0, 0), page(2.7, 120), std::nullopt});
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].process == 1);
  CHECK(changes[0].flagged);
  CHECK(changes[0].ratio == 2.7);
  CHECK(changes[0].since == 120);
  CHECK(watch.flagged(1) == 2.7);
  CHECK_FALSE(watch.flagged(0));
  CHECK(watch.observe({page(1.0, 0), page(3.1, 120), std::nullopt}).empty());  // said once
  CHECK(watch.flagged(1) == 3.1);
  CHECK(watch.observe({page(1.0, 0), std::nullopt, std::nullopt}).empty());  // a page not read: no change
  changes = watch.observe({page(1.0, 0), page(1.0, 0), std::nullopt});
  REQUIRE(changes.size() == 1);
  CHECK_FALSE(changes[0].flagged);
  CHECK_FALSE(watch.flagged(1));
}

}  // namespace
}  // namespace paddle::launcher
