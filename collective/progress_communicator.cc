#include "collective/progress_communicator.h"

namespace paddle::collective {
namespace {

using common::CollectiveKind;
using Scope = common::ProgressPage::Scope;

// A reduce buffer's allreduce is the step's gradient allreduce: marked as one.
class ProgressReduceBuffer : public ReduceBuffer {
 public:
  ProgressReduceBuffer(std::unique_ptr<ReduceBuffer> inner, common::ProgressPage& page)
      : inner_(std::move(inner)), page_(page) {}
  float* data() override { return inner_->data(); }
  size_t size() const override { return inner_->size(); }
  void allreduce(ReduceOp op) override {
    Scope in(page_, CollectiveKind::kAllreduce, inner_->size() * sizeof(float));
    inner_->allreduce(op);
  }

 private:
  std::unique_ptr<ReduceBuffer> inner_;
  common::ProgressPage& page_;
};

}  // namespace

ProgressCommunicator::ProgressCommunicator(std::unique_ptr<Communicator> inner, common::ProgressPage& page)
    : inner_(std::move(inner)), page_(page) {}

void ProgressCommunicator::allreduce(float* data, size_t count, ReduceOp op) {
  Scope in(page_, CollectiveKind::kAllreduce, count * sizeof(float));
  inner_->allreduce(data, count, op);
}

void ProgressCommunicator::broadcast(float* data, size_t count, int root) {
  Scope in(page_, CollectiveKind::kBroadcast, count * sizeof(float));
  inner_->broadcast(data, count, root);
}

void ProgressCommunicator::allgather(const float* input, float* output, size_t count) {
  Scope in(page_, CollectiveKind::kAllgather, count * sizeof(float) * static_cast<size_t>(inner_->size()));
  inner_->allgather(input, output, count);
}

void ProgressCommunicator::barrier() {
  Scope in(page_, CollectiveKind::kBarrier, 0);
  inner_->barrier();
}

std::unique_ptr<ReduceBuffer> ProgressCommunicator::reduce_buffer(size_t count) {
  std::unique_ptr<ReduceBuffer> inner;
  {
    Scope in(page_, CollectiveKind::kBarrier, 0);  // making one is a collective call: the ranks agree, as at a barrier
    inner = inner_->reduce_buffer(count);
  }
  if (!inner) return nullptr;
  return std::make_unique<ProgressReduceBuffer>(std::move(inner), page_);
}

}  // namespace paddle::collective
