#include "collective/nccl_communicator.h"

namespace paddle::collective {

struct NcclCommunicator::State {};

NcclCommunicator::NcclCommunicator(int, int, int, gloo::rendezvous::Store&, std::chrono::milliseconds, Diagnosis) {
  throw CollectiveError("the nccl backend is not in this build (configured without CUDA); use --backend=gloo");
}
NcclCommunicator::~NcclCommunicator() = default;
void NcclCommunicator::allreduce(float*, size_t, ReduceOp) {}
void NcclCommunicator::broadcast(float*, size_t, int) {}
void NcclCommunicator::allgather(const float*, float*, size_t) {}
void NcclCommunicator::barrier() {}

bool nccl_available() { return false; }

}  // namespace paddle::collective
