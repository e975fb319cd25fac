#pragma once
// NcclCommunicator: the GPU backend. NCCL's unique id travels through the job's key-value store
// (rank 0 publishes it). Communicators are created non-blocking, and every operation is waited
// for by polling, so that the timeout holds everywhere: a peer that stops answering aborts the
// communicator and raises CollectiveError naming who left.
//
// Buffers may be device memory (reduced in place, on the communicator's own stream) or host
// memory (staged through a device buffer, so host-side values such as a loss can be averaged
// over the same communicator); each call tells them apart by the pointer.

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <functional>
#include <memory>

#include "collective/communicator.h"

namespace paddle::collective {

class NcclCommunicator : public Communicator {
 public:

  NcclCommunicator(int rank, int size, int device, gloo::rendezvous::Store& store, std::chrono::milliseconds timeout,
                   Diagnosis diagnose = {});
  ~NcclCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "nccl"; }
  bool accepts_device_memory() const override { return true; }

  void allreduce(float* data, size_t count, ReduceOp op) override;
  void broadcast(float* data, size_t count, int root) override;
  void allgather(const float* input, float* output, size_t count) override;
  void barrier() override;

 private:
  struct State;
  std::unique_ptr<State> state_;
  int rank_;
  int size_;
};

// Whether this build has the NCCL backend.
bool nccl_available();

}  // namespace paddle::collective
