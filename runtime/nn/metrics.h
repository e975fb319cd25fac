#pragma once
// Metrics: top-k accuracy over class scores, and AUC over binary scores.

#include <cstdint>
#include <vector>

#include "runtime/core/tensor.h"

namespace paddle::runtime {

// Number of rows of scores [N,C] whose label is among the k highest scores.
int64_t top_k_correct(const Tensor& scores, const std::vector<int64_t>& labels, int k);

// Area under the ROC curve of `scores` (higher = positive) for 0/1 `labels`; ties count half.
// 0.5 when only one class is present; throws std::invalid_argument for a NaN score.
double auc(const std::vector<float>& scores, const std::vector<int64_t>& labels);

}  // namespace paddle::runtime
