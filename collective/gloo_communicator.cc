#include "collective/gloo_communicator.h"

#include <fmt/format.h>

#include <algorithm>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_ring.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

namespace paddle::collective {

GlooCommunicator::GlooCommunicator(int rank, int size, gloo::rendezvous::Store& store, const std::string& ip,
                                   std::chrono::milliseconds timeout, Diagnosis diagnose)
    : rank_(rank), size_(size), timeout_(timeout), diagnose_(std::move(diagnose)) {
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = ip;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    context_ = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context_->setTimeout(timeout);
    gloo::rendezvous::PrefixStore prefixed("gloo", store);
    context_->connectFullMesh(prefixed, device);
  } catch (const std::exception& e) {
    fail("connecting the full mesh", e);
  }
}

void GlooCommunicator::fail(const std::string& operation, const std::exception& e) const {
  std::string why = diagnose_ ? diagnose_() + "; " : std::string();
  throw CollectiveError(fmt::format("gloo {} failed on rank {} of {}: {}{} (timeout {} s)", operation, rank_, size_,
                                    why, e.what(), timeout_.count() / 1000));
}

gloo::Algorithm& GlooCommunicator::small_ring(size_t count) {
  // Every rank makes the same calls in the same order, so the caches stay in step.
  if (staging_.empty()) staging_.resize(kSmallAllreduceBytes / sizeof(float));
  auto it = small_rings_.find(count);
  if (it != small_rings_.end()) return *it->second;
  if (small_rings_.size() >= kMaxCachedRings) small_rings_.clear();
  std::vector<float*> ptrs{staging_.data()};
  auto ring = std::make_unique<gloo::AllreduceRing<float>>(context_, ptrs, static_cast<int>(count));
  return *(small_rings_[count] = std::move(ring));
}

void GlooCommunicator::allreduce(float* data, size_t count, ReduceOp op) {
  if (count == 0) return;
  try {
    if (count * sizeof(float) <= kSmallAllreduceBytes) {
      gloo::Algorithm& ring = small_ring(count);
      std::copy_n(data, count, staging_.data());
      ring.run();
      std::copy_n(staging_.data(), count, data);
    } else {
      gloo::AllreduceOptions opts(context_);
      opts.setOutput(data, count);
      opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
      opts.setTag(next_tag_++);
      opts.setTimeout(timeout_);
      gloo::allreduce(opts);
    }
  } catch (const std::exception& e) {
    fail(fmt::format("allreduce of {} floats", count), e);
  }
  if (op == ReduceOp::kAvg) {
    const float scale = 1.0f / static_cast<float>(size_);
    for (size_t i = 0; i < count; ++i) data[i] *= scale;
  }
}

void GlooCommunicator::broadcast(float* data, size_t count, int root) {
  if (count == 0) return;
  try {
    gloo::BroadcastOptions opts(context_);
    opts.setOutput(data, count);
    opts.setRoot(root);
    opts.setTag(next_tag_++);
    opts.setTimeout(timeout_);
    gloo::broadcast(opts);
  } catch (const std::exception& e) {
    fail(fmt::format("broadcast of {} floats from rank {}", count, root), e);
  }
}

void GlooCommunicator::allgather(const float* input, float* output, size_t count) {
  try {
    gloo::AllgatherOptions opts(context_);
    opts.setInput(const_cast<float*>(input), count);
    opts.setOutput(output, count * size_);
    opts.setTag(next_tag_++);
    opts.setTimeout(timeout_);
    gloo::allgather(opts);
  } catch (const std::exception& e) {
    fail(fmt::format("allgather of {} floats", count), e);
  }
}

void GlooCommunicator::barrier() {
  try {
    gloo::BarrierOptions opts(context_);
    opts.setTag(next_tag_++);
    opts.setTimeout(timeout_);
    gloo::barrier(opts);
  } catch (const std::exception& e) {
    fail("barrier", e);
  }
}

}  // namespace paddle::collective
