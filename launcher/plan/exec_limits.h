#pragma once
// What exec(2) takes, checked before anything starts. Linux refuses one environment string
// ("NAME=value") longer than MAX_ARG_STRLEN, 128 KiB, with E2BIG. A job of thousands of ranks
// reaches it in PADDLE_TRAINER_ENDPOINTS (some 6,000 endpoints), as it would under Paddle's own
// launcher: better one line before the rendezvous's processes start than E2BIG from each.

#include <cstddef>

#include "launcher/plan/launch_plan.h"

namespace paddle::launcher {

// Bytes of one "NAME=value" string, its terminating NUL included.
inline constexpr size_t kMaxEnvironmentString = 131072;

// Throws common::UsageError naming the variable, the process, its size and the limit when a
// process of `plan` would get a variable exec(2) refuses.
void check_exec_limits(const LaunchPlan& plan);

}  // namespace paddle::launcher
