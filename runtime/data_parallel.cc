#include "data_parallel.h"

#include <algorithm>

namespace paddle::runtime {

DataParallel::DataParallel(Sequential& model, collective::Communicator& comm, size_t bucket_bytes)
    : model_(model), comm_(comm) {
  auto params = model.parameters();
  std::reverse(params.begin(), params.end());  // backward finishes the last layers first
  const size_t bucket_floats = std::max<size_t>(1, bucket_bytes / sizeof(float));
  for (Parameter* p : params) {
    if (buckets_.empty() || (buckets_.back().buffer.size() + p->grad.data.size() > bucket_floats &&
                             !buckets_.back().params.empty()))
      buckets_.emplace_back();
    Bucket& b = buckets_.back();
    bucket_of_[p] = {buckets_.size() - 1, b.buffer.size()};
    b.params.push_back(p);
    b.buffer.resize(b.buffer.size() + p->grad.data.size());
  }
  for (auto& b : buckets_) b.waiting = b.params.size();
  model_.on_gradients_ready([this](const std::vector<Parameter*>& ready) { on_ready(ready); });
  thread_ = std::thread([this] { communicate(); });
}

DataParallel::~DataParallel() {
  model_.on_gradients_ready({});
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void DataParallel::broadcast_parameters() {
  for (Parameter* p : model_.parameters()) comm_.broadcast(p->value.ptr(), p->value.data.size(), 0);
  for (auto& [name, tensor] : model_.buffers()) comm_.broadcast(tensor->ptr(), tensor->data.size(), 0);
}

void DataParallel::on_ready(const std::vector<Parameter*>& params) {
  for (Parameter* p : params) {
    auto [index, offset] = bucket_of_.at(p);
    Bucket& b = buckets_[index];
    std::copy(p->grad.data.begin(), p->grad.data.end(), b.buffer.begin() + static_cast<std::ptrdiff_t>(offset));
    if (--b.waiting == 0) enqueue(index);
  }
}

void DataParallel::enqueue(size_t bucket) {
  std::lock_guard lock(mutex_);
  buckets_[bucket].queued = true;
  queue_.push_back(bucket);
  ++in_flight_;
  changed_.notify_all();
}

void DataParallel::communicate() {
  while (true) {
    size_t index;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      index = queue_.front();
      queue_.pop_front();
    }
    Bucket& b = buckets_[index];
    try {
      comm_.allreduce(b.buffer.data(), b.buffer.size(), collective::ReduceOp::kAvg);
      size_t offset = 0;
      for (Parameter* p : b.params) {
        std::copy_n(b.buffer.begin() + static_cast<std::ptrdiff_t>(offset), p->grad.data.size(), p->grad.data.begin());
        offset += p->grad.data.size();
      }
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    --in_flight_;
    changed_.notify_all();
  }
}

void DataParallel::finish_step() {
  for (size_t i = 0; i < buckets_.size(); ++i)
    if (!buckets_[i].queued) {
      // A parameter its layer never reported (unused this step): reduce what the bucket holds.
      for (Parameter* p : buckets_[i].params) {
        auto [index, offset] = bucket_of_.at(p);
        std::copy(p->grad.data.begin(), p->grad.data.end(), buckets_[index].buffer.begin() + static_cast<std::ptrdiff_t>(offset));
      }
      enqueue(i);
    }
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return in_flight_ == 0; });
  for (auto& b : buckets_) {
    b.waiting = b.params.size();
    b.queued = false;
  }
  if (error_) {
    auto e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

}  // namespace paddle::runtime
