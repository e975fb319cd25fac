#include "runtime/nn/metrics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <numeric>

namespace paddle::runtime {

int64_t top_k_correct(const Tensor& output, const std::vector<int64_t>& labels, int k) {
  Tensor copy;
  const Tensor& scores = on_host(output, copy);
  const int64_t n = scores.dim(0), c = scores.dim(1);
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = scores.ptr() + i * c;
    const float target = row[labels[i]];
    int64_t higher = 0;
    for (int64_t j = 0; j < c; ++j) higher += row[j] > target;
    correct += higher < k;
  }
  return correct;
}

double auc(const std::vector<float>& scores, const std::vector<int64_t>& labels) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  for (float s : scores)
    if (std::isnan(s)) throw std::invalid_argument("auc: a score is NaN");
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  double positives = 0, negatives = 0, rank_sum = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) ++j;
    const double average_rank = (static_cast<double>(i) + static_cast<double>(j) + 1.0) / 2.0;  // 1-based
    for (size_t t = i; t < j; ++t) {
      if (labels[order[t]] == 1) {
        positives += 1;
        rank_sum += average_rank;
      } else {
        negatives += 1;
      }
    }
    i = j;
  }
  if (positives == 0 || negatives == 0) return 0.5;
  return (rank_sum - positives * (positives + 1) / 2.0) / (positives * negatives);
}

}  // namespace paddle::runtime
