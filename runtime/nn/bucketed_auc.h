#pragma once
// BucketedAuc: the AUC and log loss of a binary classifier, as counts that add up across
// workers. Each score in [0, 1] falls into one of kBuckets equal-width buckets, counted apart
// for positive and negative labels; the log loss is kept as a sum with its sample count. Two
// workers' counts summed give exactly the counts of their samples together, so a job's AUC is
// the AUC of the summed counts, whoever holds which samples.
//
// The AUC is the trapezoid area under the ROC curve the buckets trace, from the highest bucket
// down: samples in one bucket count as ties (half). It is within about 1 / kBuckets of the
// exact AUC of the scores (metrics.h auc()).
//
// Laid out as one float vector for a transport that adds floats (a parameter server's dense
// table, an allreduce): [positive[kBuckets], negative[kBuckets], loss_sum, samples]. Counts stay
// exact as floats below 2^24 per bucket, so counts of one evaluation travel, not running totals.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace paddle::runtime {

class BucketedAuc {
 public:
  static constexpr size_t kBuckets = 1u << 14;
  static constexpr size_t kVectorSize = 2 * kBuckets + 2;

  BucketedAuc();
  // Throws std::invalid_argument naming the vector's size unless it is kVectorSize.
  static BucketedAuc from_vector(std::span<const float> values);
  std::vector<float> to_vector() const;

  // One sample: its predicted probability of the positive class, its 0/1 label and its loss.
  void add(float probability, bool positive, double loss);
  void merge(const BucketedAuc& other);

  double samples() const { return samples_; }
  double positives() const;
  // 0.5 when only one class has samples.
  double auc() const;
  // The mean loss; 0 without samples.
  double mean_loss() const { return samples_ > 0 ? loss_sum_ / samples_ : 0.0; }

 private:
  std::vector<double> positive_, negative_;
  double loss_sum_ = 0, samples_ = 0;
};

}  // namespace paddle::runtime
