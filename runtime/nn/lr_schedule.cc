#include "runtime/nn/lr_schedule.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>
#include <stdexcept>

#include "common/error.h"

namespace paddle::runtime {

void LrSchedule::validate() const {
  if (kind == LrScheduleKind::kCosine && epochs <= 0)
    throw common::ConfigError(fmt::format("lr_schedule cosine needs epochs > 0, got {}", epochs));
  if (kind == LrScheduleKind::kPiecewise && values.size() != boundaries.size() + 1)
    throw common::ConfigError(fmt::format("lr_schedule: piecewise needs {} values for {} boundaries, got {}",
                                            boundaries.size() + 1, boundaries.size(), values.size()));
}

float LrSchedule::at(int64_t step) const {
  if (kind == LrScheduleKind::kPiecewise) {
    size_t i = 0;
    while (i < boundaries.size() && step >= boundaries[i]) ++i;
    return values[i];
  }
  if (kind == LrScheduleKind::kCosine) {
    const double per_epoch = static_cast<double>(std::max<int64_t>(1, steps_per_epoch));
    const double epoch =
        static_cast<double>(resumed_epoch) + std::floor(static_cast<double>(step - resumed_step) / per_epoch);
    return static_cast<float>(base_lr * 0.5 * (std::cos(epoch * std::numbers::pi / static_cast<double>(epochs)) + 1.0));
  }
  return base_lr;
}

}  // namespace paddle::runtime
