#include "runtime/distributed/data_parallel.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/elementwise.h"

namespace paddle::runtime {

DataParallel::DataParallel(Sequential& model, collective::Communicator& comm, size_t bucket_bytes,
                           Execution* execution)
    : model_(model),
      comm_(comm),
      execution_(execution),
      context_(execution != nullptr ? execution->context() : kernels::Context::host()) {
  const Device device = execution != nullptr ? execution->device() : Device::cpu();
  if (device.is_cuda() && !comm.accepts_device_memory())
    throw std::invalid_argument(fmt::format("the model is on {}, but the {} backend reduces host memory only; use the "
                                            "nccl backend",
                                            device.to_string(), comm.backend()));
  auto params = model.parameters();
  std::reverse(params.begin(), params.end());  // backward finishes the last layers first
  const int64_t bucket_floats = static_cast<int64_t>(std::max<size_t>(1, bucket_bytes / sizeof(float)));
  for (Parameter* p : params) {
    if (buckets_.empty() ||
        (buckets_.back().floats + p->grad.numel() > bucket_floats && !buckets_.back().params.empty()))
      buckets_.emplace_back();
    Bucket& b = buckets_.back();
    bucket_of_[p] = {buckets_.size() - 1, b.floats};
    b.params.push_back(p);
    b.floats += p->grad.numel();
  }
  bool try_shared = !device.is_cuda();
  for (auto& b : buckets_) {
    if (try_shared) {
      try {
        b.shared = comm_.reduce_buffer(static_cast<size_t>(b.floats));
      } catch (const collective::CollectiveError& e) {  // thrown on every rank: all fall back alike
        fmt::print(stderr, "collective: gradient buckets in private memory, copied through the communicator: {}\n",
                   e.what());
        try_shared = false;
      }
    }
    if (!b.shared) b.buffer = Tensor({b.floats}, DType::kFloat32, device);
    if (device.is_cuda()) b.packed = std::make_unique<kernels::Event>(context_);
    b.waiting = b.params.size();
  }
  if (!device.is_cuda()) place_gradients_in_buckets();
  model_.on_gradients_ready([this](const std::vector<Parameter*>& ready) { on_ready(ready); });
  // Named for top -H and scripts/bench_train.sh.
  thread_.start("grad-allreduce", [this](std::stop_token stop) { communicate(stop); }, [this] {
    std::lock_guard lock(mutex_);
    changed_.notify_all();
  });
}

DataParallel::~DataParallel() {
  model_.on_gradients_ready({});
  thread_.stop();
  for (const auto& b : buckets_)  // the buckets go: gradients still in them move to blocks of their own
    for (Parameter* p : b.params)
      if (in_bucket(p)) p->grad = Tensor(p->grad);
}

void DataParallel::place_gradients_in_buckets() {
  for (auto& b : buckets_)
    for (Parameter* p : b.params) {
      if (p->grad.dtype() != DType::kFloat32 || !p->grad.is_plain()) continue;
      float* at = b.data() + bucket_of_.at(p).second;
      const Tensor& grad = std::as_const(p->grad);
      std::copy(grad.ptr(), grad.ptr() + grad.numel(), at);
      p->grad = Tensor::over(grad.shape, at);
    }
}

const float* DataParallel::place_of(const Parameter* p) {
  const auto [index, offset] = bucket_of_.at(p);
  return buckets_[index].data() + offset;
}

bool DataParallel::in_bucket(const Parameter* p) { return std::as_const(p->grad).ptr() == place_of(p); }

size_t DataParallel::shared_bucket_count() const {
  return static_cast<size_t>(std::count_if(buckets_.begin(), buckets_.end(), [](const Bucket& b) { return b.shared != nullptr; }));
}

void DataParallel::broadcast_parameters() {
  if (execution_ != nullptr) execution_->synchronize();
  for (Parameter* p : model_.parameters()) comm_.broadcast(p->value.ptr(), static_cast<size_t>(p->value.numel()), 0);
  for (auto& [name, tensor] : model_.buffers()) comm_.broadcast(tensor->ptr(), static_cast<size_t>(tensor->numel()), 0);
}

void DataParallel::pack(Parameter* p) {
  if (in_bucket(p)) return;
  auto [index, offset] = bucket_of_.at(p);
  float* to = buckets_[index].data() + offset;
  const size_t n = static_cast<size_t>(p->grad.numel());
  kernels::copy(context_, to, std::as_const(p->grad).ptr(), n);
}

void DataParallel::unpack(Bucket& b) {
  const float* from = b.data();
  for (Parameter* p : b.params) {
    const size_t n = static_cast<size_t>(p->grad.numel());
    if (!in_bucket(p)) kernels::copy(context_, p->grad.ptr(), from, n);
    from += n;
  }
}

void DataParallel::on_ready(const std::vector<Parameter*>& params) {
  for (Parameter* p : params) {
    pack(p);
    const size_t index = bucket_of_.at(p).first;
    if (--buckets_[index].waiting == 0) enqueue(index);
  }
}

void DataParallel::enqueue(size_t bucket) {
  Bucket& b = buckets_[bucket];
  if (b.packed) b.packed->record();
  std::lock_guard lock(mutex_);
  b.queued = true;
  queue_.push_back(bucket);
  ++in_flight_;
  changed_.notify_all();
}

void DataParallel::communicate(const std::stop_token& stop) {
  while (true) {
    size_t index;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop.stop_requested() || !queue_.empty(); });
      if (queue_.empty()) return;
      index = queue_.front();
      queue_.pop_front();
    }
    Bucket& b = buckets_[index];
    try {
      if (b.packed) b.packed->synchronize();
      if (b.shared) b.shared->allreduce(collective::ReduceOp::kAvg);
      else comm_.allreduce(b.buffer.ptr(), static_cast<size_t>(b.floats), collective::ReduceOp::kAvg);
      if (!context_.is_cuda()) unpack(b);  // on a device, finish_step() queues it on the model's stream
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
      for (Parameter* p : buckets_[i].params) pack(p);
      enqueue(i);
    }
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return in_flight_ == 0; });
  }
  for (auto& b : buckets_) {
    b.waiting = b.params.size();
    b.queued = false;
  }
  if (error_) {
    auto e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
  if (context_.is_cuda())
    for (auto& b : buckets_) unpack(b);
}

}  // namespace paddle::runtime
