#pragma once
// BatchLoader: one epoch of this rank's batches, assembled on a background thread.
//
// Every rank draws the same shuffled order (from the seed and the epoch) and cuts it into
// global batches of batch_size * world samples; rank r takes the r-th slice of each. So
// W ranks with batch B see exactly the samples of 1 rank with batch W*B. An incomplete last
// global batch is dropped.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

#include "common/background_thread.h"
#include "runtime/data/dataset.h"

namespace paddle::runtime {

struct ShardSpec {
  size_t batch_size = 32;  // per rank
  int rank = 0;
  int world = 1;
  uint64_t seed = 0;
  bool shuffle = true;
  size_t prefetch = 2;  // batches assembled ahead
};

// The sample indices of each of this rank's batches in `epoch` (the same cut BatchLoader uses).
std::vector<std::vector<size_t>> rank_batches(size_t samples, const ShardSpec& spec, int64_t epoch);

class BatchLoader {
 public:
  BatchLoader(const Dataset& data, const ShardSpec& spec, int64_t epoch);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  // Batches per epoch (the same on every rank).
  static size_t batches_per_epoch(size_t samples, const ShardSpec& spec);
  // The next batch, or nothing at the end of the epoch.
  std::optional<Batch> next();

 private:
  void produce(const std::stop_token& stop);

  const Dataset& data_;
  ShardSpec spec_;
  std::vector<std::vector<size_t>> batches_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> ready_;
  size_t produced_ = 0;
  common::BackgroundThread worker_;
};

}  // namespace paddle::runtime
