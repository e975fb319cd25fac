#pragma once
// ProgressCommunicator: a Communicator that marks each collective on the process's progress page
// (common/progress_page.h) before handing it to the one it wraps: its kind, its sequence number
// and its bytes; the phase it was called from comes back when it returns. A launcher watching
// the page can then say which collective each rank waits in, and which rank never entered it.
// Gloo's decorators in rendezvous/ are the model: one seam, no change to any backend.

#include <memory>

#include "collective/communicator.h"
#include "common/progress_page.h"

namespace paddle::collective {

class ProgressCommunicator : public Communicator {
 public:
  // `page` must outlive this.
  ProgressCommunicator(std::unique_ptr<Communicator> inner, common::ProgressPage& page);

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string backend() const override { return inner_->backend(); }
  bool accepts_device_memory() const override { return inner_->accepts_device_memory(); }

  void allreduce(float* data, size_t count, ReduceOp op) override;
  void broadcast(float* data, size_t count, int root) override;
  void allgather(const float* input, float* output, size_t count) override;
  void barrier() override;
  std::unique_ptr<ReduceBuffer> reduce_buffer(size_t count) override;

 private:
  std::unique_ptr<Communicator> inner_;
  common::ProgressPage& page_;
};

}  // namespace paddle::collective
