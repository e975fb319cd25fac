#include "ps/client/async_communicator.h"

#include <map>
#include <unordered_map>

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
      std::vector<float> dense = batch.front().dense;
      for (size_t i = 1; i < batch.size(); ++i)
        for (size_t j = 0; j < dense.size(); ++j) dense[j] += batch[i].dense[j];
      for (auto& v : dense) v /= static_cast<float>(batch.size());
      sender_->push_dense(0, dense);
      // Sparse: per table and key, the mean over the steps that touched the key (a CTR push's show
      // and click: the sum).
      std::map<uint32_t, std::unordered_map<uint64_t, std::pair<std::vector<float>, int>>> merged;
      for (auto& step : batch)
        for (auto& part : step.sparse) {
          const size_t dim = push_width(tables_.sparse[part.table]);
          auto& rows = merged[part.table];
          for (size_t k = 0; k < part.keys.size(); ++k) {
            auto& [sum, count] = rows[part.keys[k]];
            if (sum.empty()) sum.assign(dim, 0.0f);
            for (size_t d = 0; d < dim; ++d) sum[d] += part.grads[k * dim + d];
            ++count;
          }
        }
      for (auto& [table, rows] : merged) {
        std::vector<uint64_t> keys;
        std::vector<float> grads;
        const size_t statistics = push_width(tables_.sparse[table]) - tables_.sparse[table].dim;
        for (auto& [key, value] : rows) {
          keys.push_back(key);
          for (size_t d = 0; d < value.first.size(); ++d)
            grads.push_back(d < statistics ? value.first[d] : value.first[d] / static_cast<float>(value.second));
        }
        sender_->push_sparse(table, keys, grads);
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
