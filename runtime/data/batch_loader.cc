#include "runtime/data/batch_loader.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace paddle::runtime {

size_t BatchLoader::batches_per_epoch(size_t samples, const ShardSpec& spec) {
  return samples / (spec.batch_size * static_cast<size_t>(spec.world));
}

std::vector<std::vector<size_t>> rank_batches(size_t samples, const ShardSpec& spec, int64_t epoch) {
  std::vector<size_t> order(samples);
  std::iota(order.begin(), order.end(), 0);
  if (spec.shuffle) {
    std::mt19937_64 rng(spec.seed * 1000003ULL + static_cast<uint64_t>(epoch));
    std::shuffle(order.begin(), order.end(), rng);
  }
  std::vector<std::vector<size_t>> batches(BatchLoader::batches_per_epoch(samples, spec));
  for (size_t b = 0; b < batches.size(); ++b) {
    const size_t start = (b * static_cast<size_t>(spec.world) + static_cast<size_t>(spec.rank)) * spec.batch_size;
    batches[b].assign(order.begin() + static_cast<std::ptrdiff_t>(start),
                      order.begin() + static_cast<std::ptrdiff_t>(start + spec.batch_size));
  }
  return batches;
}

BatchLoader::BatchLoader(const Dataset& data, const ShardSpec& spec, int64_t epoch)
    : data_(data), spec_(spec), batches_(rank_batches(data.size(), spec, epoch)) {
  // Named for top -H and scripts/bench_train.sh.
  worker_.start("batch-loader", [this](std::stop_token stop) { produce(stop); }, [this] {
    std::lock_guard lock(mutex_);
    changed_.notify_all();
  });
}

BatchLoader::~BatchLoader() { worker_.stop(); }

void BatchLoader::produce(const std::stop_token& stop) {
  for (const auto& indices : batches_) {
    Batch batch = data_.gather(indices);
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return stop.stop_requested() || ready_.size() < spec_.prefetch; });
    if (stop.stop_requested()) return;
    ready_.push_back(std::move(batch));
    ++produced_;
    changed_.notify_all();
  }
}

std::optional<Batch> BatchLoader::next() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !ready_.empty() || produced_ == batches_.size(); });
  if (ready_.empty()) return std::nullopt;
  Batch b = std::move(ready_.front());
  ready_.pop_front();
  changed_.notify_all();
  return b;
}

}  // namespace paddle::runtime
