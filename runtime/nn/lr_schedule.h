#pragma once
// Learning-rate schedules, as functions of the global step (and the steps in an epoch).

#include <cstdint>
#include <string>
#include <vector>

#include "common/enum_names.h"

namespace paddle::runtime {

enum class LrScheduleKind { kConstant, kPiecewise, kCosine };
inline constexpr common::EnumNames<LrScheduleKind, 3> kLrScheduleNames{
    {{{LrScheduleKind::kConstant, "constant"}, {LrScheduleKind::kPiecewise, "piecewise"}, {LrScheduleKind::kCosine, "cosine"}}}};

struct LrSchedule {
  LrScheduleKind kind = LrScheduleKind::kConstant;
  float base_lr = 0.01f;
  std::vector<int64_t> boundaries;  // piecewise: step boundaries
  std::vector<float> values;        // piecewise: boundaries.size() + 1 rates
  int64_t steps_per_epoch = 1;      // cosine
  int64_t epochs = 1;               // cosine
  // cosine: where this run's epochs of steps_per_epoch steps begin, a resumed run's position
  // (epochs completed, global step). The epochs before it may have had another number of steps,
  // at another world size, so the epoch of a step is counted from here.
  int64_t resumed_epoch = 0, resumed_step = 0;

  // Throws common::ConfigError for mismatched piecewise lists or a non-positive epoch count.
  void validate() const;
  // Paddle's forms: piecewise_decay on the global step; cosine_decay: base * 0.5 *
  // (cos(epoch * pi / epochs) + 1), epoch = resumed_epoch + (step - resumed_step) / steps_per_epoch.
  float at(int64_t step) const;
};

}  // namespace paddle::runtime
