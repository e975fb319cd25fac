#include "runtime/nn/lr_schedule.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace paddle::runtime {

void LrSchedule::validate() const {
  if (type == "constant" || type == "cosine") return;
  if (type != "piecewise")
    throw std::invalid_argument(fmt::format("lr_schedule.type '{}' is not constant, piecewise or cosine", type));
  if (values.size() != boundaries.size() + 1)
    throw std::invalid_argument(fmt::format("lr_schedule: piecewise needs {} values for {} boundaries, got {}",
                                            boundaries.size() + 1, boundaries.size(), values.size()));
}

float LrSchedule::at(int64_t step) const {
  if (type == "piecewise") {
    size_t i = 0;
    while (i < boundaries.size() && step >= boundaries[i]) ++i;
    return values[i];
  }
  if (type == "cosine") {
    const double epoch = std::floor(static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, steps_per_epoch)));
    return static_cast<float>(base_lr * 0.5 * (std::cos(epoch * std::numbers::pi / static_cast<double>(epochs)) + 1.0));
  }
  return base_lr;
}

}  // namespace paddle::runtime
