#include "ps/client/async_communicator.h"

#include <algorithm>

namespace paddle::ps {

AsyncCommunicator::AsyncCommunicator(std::unique_ptr<ParameterStore> sender, TableSpecs tables, size_t queue_capacity,
                                     size_t max_merge)
    : sender_(std::move(sender)),
      tables_(std::move(tables)),
      capacity_(std::max<size_t>(1, queue_capacity)), max_merge_(std::max<size_t>(1, max_merge)) {
  thread_.start("ps-async-send", [this](std::stop_token stop) { run(stop); }, [this] {
    std::lock_guard lock(mutex_);
    changed_.notify_all();
  });
}

AsyncCommunicator::~AsyncCommunicator() { thread_.stop(); }

void AsyncCommunicator::rethrow_locked() {
  if (error_) std::rethrow_exception(error_);
}

void AsyncCommunicator::push(StepGradients step) {
  check_dense_length(tables_, 0, step.dense.size(), "async push_dense");
  for (const auto& part : step.sparse)
    check_sparse_length(tables_, part.table, part.keys.size(), part.grads.size(), "async push_sparse");
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return error_ || queue_.size() < capacity_; });
  rethrow_locked();
  queue_.push_back(std::move(step));
  changed_.notify_all();
}

void AsyncCommunicator::flush() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return error_ || (queue_.empty() && !busy_); });
  rethrow_locked();
}

void AsyncCommunicator::run(const std::stop_token& stop) {
  while (true) {
    std::vector<StepGradients> batch;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop.stop_requested() || !queue_.empty(); });
      if (queue_.empty()) return;
      while (!queue_.empty() && batch.size() < max_merge_) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      busy_ = true;
      changed_.notify_all();  // room in the queue
    }
    try {
      // Dense: the mean over the merged steps.
      std::vector<float> dense = std::move(batch.front().dense);
      for (size_t i = 1; i < batch.size(); ++i)
        for (size_t j = 0; j < dense.size(); ++j) dense[j] += batch[i].dense[j];
      for (auto& v : dense) v /= static_cast<float>(batch.size());
      sender_->push_dense(0, dense);
      // Sparse: per table and key, the mean over the steps that touched the key (a CTR push's show
      // and click: the sum). A step's rows are already one per key: a lone step goes as it is.
      for (uint32_t table = 0; table < tables_.sparse.size(); ++table) {
        const size_t width = push_width(tables_.sparse[table]);
        const size_t statistics = width - tables_.sparse[table].dim;
        merged_keys_.clear();
        merged_rows_.clear();
        merged_counts_.clear();
        const StepGradients::Sparse* lone = nullptr;
        size_t parts = 0;
        for (auto& step : batch)
          for (auto& part : step.sparse) {
            if (part.table != table) continue;
            lone = &part;
            ++parts;
            for (size_t k = 0; k < part.keys.size(); ++k) {
              const uint32_t row = merged_keys_.insert(part.keys[k]);
              if (row == merged_counts_.size()) {
                merged_counts_.push_back(0);
                merged_rows_.resize(merged_rows_.size() + width, 0.0f);
              }
              float* sum = merged_rows_.data() + row * width;
              const float* grads = part.grads.data() + k * width;
              for (size_t d = 0; d < width; ++d) sum[d] += grads[d];
              ++merged_counts_[row];
            }
          }
        if (parts == 0) continue;
        if (parts == 1) {
          sender_->push_sparse(table, lone->keys, lone->grads);
          continue;
        }
        for (size_t row = 0; row < merged_counts_.size(); ++row)
          if (merged_counts_[row] > 1)
            for (size_t d = statistics; d < width; ++d) merged_rows_[row * width + d] /= static_cast<float>(merged_counts_[row]);
        sender_->push_sparse(table, merged_keys_.keys(), merged_rows_);
      }
      std::lock_guard lock(mutex_);
      acknowledged_ += batch.size();
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    busy_ = false;
    ++sends_;
    changed_.notify_all();
  }
}

}  // namespace paddle::ps
