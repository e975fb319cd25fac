#pragma once
// Communicator: the collectives data-parallel training needs, over one group of ranks.
// Buffers are host memory, or CUDA device memory for a backend that accepts_device_memory()
// (NCCL). Every call has the communicator's timeout and throws CollectiveError with the
// operation and ranks involved.

#include <cstddef>
#include <functional>
#include <memory>
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

// Says, after a failed collective, what the job knows of the peers gone (the launcher's root cause,
// the store's view of who left), for the error message. Every backend takes one.
using Diagnosis = std::function<std::string()>;

// A float buffer that its communicator reduces where it lies, for gradient buckets written once
// per step and averaged (runtime/distributed/data_parallel.h). Communicator::allreduce(data) must
// copy `data` into memory the peers can read and the result back out; a ReduceBuffer is that
// memory already, so the values are written there once and reduced in place.
class ReduceBuffer {
 public:
  virtual ~ReduceBuffer() = default;

  // This rank's size() floats: write them, call allreduce(), read the result here.
  virtual float* data() = 0;
  virtual size_t size() const = 0;
  // A collective call: every rank's data() becomes the sum (or mean) over the ranks, with the
  // same bits on every rank and as Communicator::allreduce would give. Throws CollectiveError.
  virtual void allreduce(ReduceOp op) = 0;
};

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
  // A collective call: a host buffer of `count` floats that this communicator reduces in place,
  // or null on every rank where the backend has none (only ShmCommunicator makes them: every
  // rank on one node). Throws CollectiveError on every rank when one cannot make its part.
  virtual std::unique_ptr<ReduceBuffer> reduce_buffer(size_t /*count*/) { return nullptr; }
};

}  // namespace paddle::collective
