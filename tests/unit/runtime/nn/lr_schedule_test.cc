#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "common/error.h"
#include "runtime/nn/lr_schedule.h"

using namespace paddle::runtime;

TEST_CASE("learning-rate schedules") {
  LrSchedule c;
  c.base_lr = 0.1f;
  CHECK(c.at(1000) == doctest::Approx(0.1));
  LrSchedule p{LrScheduleKind::kPiecewise, 0.1f, {10, 20}, {1.0f, 0.5f, 0.25f}};
  CHECK(p.at(9) == 1.0f);
  CHECK(p.at(10) == 0.5f);
  CHECK(p.at(25) == 0.25f);
  LrSchedule bad{LrScheduleKind::kPiecewise, 0.1f, {10}, {1.0f}};
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("piecewise needs 2 values"), paddle::common::ConfigError);
  CHECK(kLrScheduleNames.parse("cosine", "lr_schedule.type") == LrScheduleKind::kCosine);
  CHECK_THROWS_WITH_AS(kLrScheduleNames.parse("linear", "lr_schedule.type"), doctest::Contains("lr_schedule.type 'linear'"),
                       paddle::common::ConfigError);
  LrSchedule cos{LrScheduleKind::kCosine, 0.1f, {}, {}, 10, 4};
  CHECK(cos.at(0) == doctest::Approx(0.1));
  CHECK(cos.at(25) == doctest::Approx(0.05));  // epoch 2 of 4
  CHECK(cos.at(39) == doctest::Approx(0.1 * 0.5 * (std::cos(3.14159265 * 3 / 4) + 1)));
}

TEST_CASE("a resumed cosine schedule counts epochs from the checkpoint, whatever the steps per epoch before it") {
  // 3 epochs of 6 steps (3 ranks) were done; now an epoch has 10 steps (2 ranks).
  LrSchedule resumed{LrScheduleKind::kCosine, 0.1f, {}, {}, 10, 6, 3, 18};
  const auto cosine_at = [](double epoch) { return 0.1 * 0.5 * (std::cos(3.14159265358979 * epoch / 6) + 1); };
  CHECK(resumed.at(18) == doctest::Approx(cosine_at(3)));
  CHECK(resumed.at(27) == doctest::Approx(cosine_at(3)));
  CHECK(resumed.at(28) == doctest::Approx(cosine_at(4)));
  CHECK(resumed.at(47) == doctest::Approx(cosine_at(5)));
  // Piecewise boundaries stay global steps.
  LrSchedule p{LrScheduleKind::kPiecewise, 0.1f, {20}, {1.0f, 0.5f}, 10, 6, 3, 18};
  CHECK(p.at(19) == 1.0f);
  CHECK(p.at(20) == 0.5f);
}
