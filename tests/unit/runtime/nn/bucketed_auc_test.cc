#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "runtime/nn/bucketed_auc.h"
#include "runtime/nn/metrics.h"

using paddle::runtime::auc;
using paddle::runtime::BucketedAuc;

TEST_CASE("bucketed AUC: close to the exact AUC, and two halves' counts add up to the whole's") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> scores;
  std::vector<int64_t> labels;
  BucketedAuc whole, first, second;
  for (int i = 0; i < 20000; ++i) {
    const bool positive = unit(rng) < 0.3f;
    const float score = std::clamp(unit(rng) * 0.7f + (positive ? 0.2f : 0.0f), 0.0f, 1.0f);
    scores.push_back(score);
    labels.push_back(positive ? 1 : 0);
    whole.add(score, positive, 0.5);
    (i % 2 ? second : first).add(score, positive, 0.5);
  }
  CHECK(whole.auc() == doctest::Approx(auc(scores, labels)).epsilon(1e-3));
  const BucketedAuc shipped = BucketedAuc::from_vector(first.to_vector());  // through a float transport
  BucketedAuc summed = BucketedAuc::from_vector(second.to_vector());
  summed.merge(shipped);
  CHECK(summed.auc() == whole.auc());
  CHECK(summed.samples() == 20000);
  CHECK(summed.positives() == whole.positives());
  CHECK(summed.mean_loss() == doctest::Approx(0.5));
}

TEST_CASE("bucketed AUC: perfect, inverted, tied and one-class scores") {
  BucketedAuc perfect, inverted, tied, one_class;
  for (int i = 0; i < 10; ++i) {
    perfect.add(0.9f, true, 0);
    perfect.add(0.1f, false, 0);
    inverted.add(0.1f, true, 0);
    inverted.add(0.9f, false, 0);
    tied.add(0.5f, true, 0);
    tied.add(0.5f, false, 0);
    one_class.add(0.3f, true, 0);
  }
  CHECK(perfect.auc() == 1.0);
  CHECK(inverted.auc() == 0.0);
  CHECK(tied.auc() == 0.5);
  CHECK(one_class.auc() == 0.5);
  CHECK_THROWS_WITH(BucketedAuc::from_vector(std::vector<float>(3)), doctest::Contains("3 values, expected"));
}
