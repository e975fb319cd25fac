#include <doctest/doctest.h>

#include "common/error.h"
#include "launcher/plan/exec_limits.h"

using namespace paddle::launcher;

namespace {

LaunchPlan plan_with_endpoints(int endpoints) {
  std::string list;
  for (int i = 0; i < endpoints; ++i) list += (i ? "," : "") + fmt::format("10.{}.{}.{}:6170", i >> 16, (i >> 8) & 255, i & 255);
  LaunchPlan plan;
  ProcessSpec trainer;
  trainer.rank = 8;
  trainer.local_index = 0;
  trainer.env = {{"PADDLE_TRAINER_ID", "8"}, {"PADDLE_TRAINER_ENDPOINTS", list}};
  plan.processes.push_back(trainer);
  return plan;
}

}  // namespace

TEST_CASE("a variable exec(2) would refuse is one line before anything starts") {
  CHECK_NOTHROW(check_exec_limits(plan_with_endpoints(4096)));  // 68 KB
  CHECK_THROWS_WITH_AS(check_exec_limits(plan_with_endpoints(16384)),
                       doctest::Contains("PADDLE_TRAINER_ENDPOINTS: 2"), paddle::common::UsageError);
  CHECK_THROWS_WITH_AS(check_exec_limits(plan_with_endpoints(16384)),
                       doctest::Contains("bytes for trainer 8 (local 0), past the 131072 Linux allows"),
                       paddle::common::UsageError);
}
