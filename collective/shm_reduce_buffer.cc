#include "collective/shm_reduce_buffer.h"

#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <vector>

namespace paddle::collective {
namespace {

using Floats = Eigen::Map<Eigen::ArrayXf>;
using ConstFloats = Eigen::Map<const Eigen::ArrayXf>;

constexpr size_t kAlign = 16;          // floats: shares start on cache lines
constexpr size_t kBlockFloats = 2048;  // 8 KB: a block's sum stays in L1 for its mean and its copy

}  // namespace

ShmReduceBuffer::ShmReduceBuffer(ShmLockstep& comm, size_t count, std::vector<std::unique_ptr<ShmSegment>> segments)
    : comm_(comm), rank_(comm.rank()), size_(comm.size()), count_(count), segments_(std::move(segments)) {
  const size_t ranks = static_cast<size_t>(size_);
  share_ = (count_ + ranks - 1) / ranks;
  share_ = (share_ + kAlign - 1) / kAlign * kAlign;
}

size_t ShmReduceBuffer::share_begin(int rank) const { return std::min(count_, static_cast<size_t>(rank) * share_); }

void ShmReduceBuffer::allreduce(ReduceOp op) {
  comm_.begin("bucket allreduce", count_);
  comm_.step();
  const size_t begin = share_begin(rank_), end = share_begin(rank_ + 1);
  const float scale = 1.0f / static_cast<float>(size_);
  std::vector<float> sum(kBlockFloats);  // a block's result: its place in this rank's buffer is an input still
  for (size_t b = begin; b < end; b += kBlockFloats) {
    const auto n = static_cast<Eigen::Index>(std::min(kBlockFloats, end - b));
    auto input = [&](int p) { return ConstFloats(buffer(p) + b, n); };
    Floats result(sum.data(), n);
    result = input(0) + input(1);
    for (int p = 2; p < size_; ++p) result += input(p);
    if (op == ReduceOp::kAvg) result *= scale;
    std::memcpy(buffer(rank_) + b, sum.data(), static_cast<size_t>(n) * sizeof(float));
  }
  comm_.step();
  for (int q = 0; q < size_; ++q) {
    const size_t from = share_begin(q), to = share_begin(q + 1);
    if (q != rank_ && to > from) std::memcpy(buffer(rank_) + from, buffer(q) + from, (to - from) * sizeof(float));
  }
  comm_.step();
}

}  // namespace paddle::collective
