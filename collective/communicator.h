#pragma once
// Communicator: the collectives data-parallel training needs, over one group of ranks.
// Buffers are host memory, or CUDA device memory for a backend that accepts_device_memory()
// (NCCL). Every call has the communicator's timeout and throws CollectiveError with the
// operation and ranks involved.

#include <cstddef>
#include <stdexcept>
#include <string>

#include "common/error.h"

namespace paddle::collective {

// A collective failed because a peer left, hung or disagreed.
class CollectiveError : public common::PeerError {
 public:
  using common::PeerError::PeerError;
};

enum class ReduceOp { kSum, kAvg };

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend() const = 0;
  virtual bool accepts_device_memory() const { return false; }

  // In place: every rank ends with the sum (or mean) of all ranks' `data`.
  virtual void allreduce(float* data, size_t count, ReduceOp op) = 0;
  // In place: every rank ends with `root`'s `data`.
  virtual void broadcast(float* data, size_t count, int root) = 0;
  // `output` (size() * count) gets every rank's `input`, in rank order.
  virtual void allgather(const float* input, float* output, size_t count) = 0;
  virtual void barrier() = 0;
};

}  // namespace paddle::collective
