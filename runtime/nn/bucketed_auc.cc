#include "runtime/nn/bucketed_auc.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace paddle::runtime {

BucketedAuc::BucketedAuc() : positive_(kBuckets, 0.0), negative_(kBuckets, 0.0) {}

BucketedAuc BucketedAuc::from_vector(std::span<const float> values) {
  if (values.size() != kVectorSize)
    throw std::invalid_argument(
        fmt::format("AUC counts: {} values, expected {} (2 x {} buckets + loss + samples)", values.size(), kVectorSize, kBuckets));
  BucketedAuc a;
  for (size_t b = 0; b < kBuckets; ++b) {
    a.positive_[b] = values[b];
    a.negative_[b] = values[kBuckets + b];
  }
  a.loss_sum_ = values[2 * kBuckets];
  a.samples_ = values[2 * kBuckets + 1];
  return a;
}

std::vector<float> BucketedAuc::to_vector() const {
  std::vector<float> v(kVectorSize);
  for (size_t b = 0; b < kBuckets; ++b) {
    v[b] = static_cast<float>(positive_[b]);
    v[kBuckets + b] = static_cast<float>(negative_[b]);
  }
  v[2 * kBuckets] = static_cast<float>(loss_sum_);
  v[2 * kBuckets + 1] = static_cast<float>(samples_);
  return v;
}

void BucketedAuc::add(float probability, bool positive, double loss) {
  if (std::isnan(probability)) throw std::invalid_argument("AUC counts: a predicted probability is NaN");
  const double clamped = std::clamp(static_cast<double>(probability), 0.0, 1.0);
  const auto bucket = std::min(kBuckets - 1, static_cast<size_t>(clamped * static_cast<double>(kBuckets)));
  (positive ? positive_ : negative_)[bucket] += 1;
  loss_sum_ += loss;
  samples_ += 1;
}

void BucketedAuc::merge(const BucketedAuc& other) {
  for (size_t b = 0; b < kBuckets; ++b) {
    positive_[b] += other.positive_[b];
    negative_[b] += other.negative_[b];
  }
  loss_sum_ += other.loss_sum_;
  samples_ += other.samples_;
}

double BucketedAuc::positives() const {
  double n = 0;
  for (double p : positive_) n += p;
  return n;
}

double BucketedAuc::auc() const {
  double area = 0, positives_above = 0, negatives_above = 0;
  for (size_t b = kBuckets; b-- > 0;) {
    // Negatives of this bucket rank below every positive above it, and tie with its own positives.
    area += negative_[b] * (positives_above + positive_[b] / 2.0);
    positives_above += positive_[b];
    negatives_above += negative_[b];
  }
  if (positives_above == 0 || negatives_above == 0) return 0.5;
  return area / (positives_above * negatives_above);
}

}  // namespace paddle::runtime
