#include "collective/nccl_communicator.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <cstring>
#include <thread>

namespace paddle::collective {
namespace {

using Clock = std::chrono::steady_clock;

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw CollectiveError(fmt::format("CUDA {} failed: {}", what, cudaGetErrorString(status)));
}

bool on_host(const void* pointer) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    cudaGetLastError();  // an unregistered host pointer on old drivers
    return true;
  }
  return attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged;
}

}  // namespace

struct NcclCommunicator::State {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int device = 0;
  std::chrono::milliseconds timeout;
  Diagnosis diagnose;
  float* scratch = nullptr;  // device staging for host buffers, and the barrier's word
  size_t scratch_floats = 0;

  [[noreturn]] void fail(const std::string& what, const std::string& why) {
    if (comm != nullptr) ncclCommAbort(comm);
    comm = nullptr;
    throw CollectiveError(fmt::format("nccl {} failed: {}{}", what, diagnose ? diagnose() + "; " : "", why));
  }

  // Waits for the communicator (after a non-blocking call) or the stream, within the timeout.
  void wait(const std::string& what, bool stream_work) {
    const auto deadline = Clock::now() + timeout;
    while (true) {
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm, &async);
      if (async != ncclSuccess && async != ncclInProgress) fail(what, ncclGetErrorString(async));
      if (!stream_work && async == ncclSuccess) return;
      if (stream_work && async == ncclSuccess) {
        cudaError_t q = cudaStreamQuery(stream);
        if (q == cudaSuccess) return;
        if (q != cudaErrorNotReady) fail(what, cudaGetErrorString(q));
      }
      if (Clock::now() > deadline) fail(what, fmt::format("timed out after {} s", timeout.count() / 1000));
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  void ensure_scratch(size_t floats) {
    if (floats <= scratch_floats) return;
    if (scratch != nullptr) cudaFree(scratch);
    check_cuda(cudaMalloc(&scratch, floats * sizeof(float)), "cudaMalloc");
    scratch_floats = floats;
  }

  void run(const std::string& what, ncclResult_t launched) {
    if (launched != ncclSuccess && launched != ncclInProgress) fail(what, ncclGetErrorString(launched));
    wait(what, true);
  }

  // Runs an in-place collective that `launch` starts on a device buffer: `data` itself, or a copy
  // in scratch when `data` is on the host. Nothing to do for no data.
  template <typename Launch>
  void run_in_place(const std::string& what, float* data, size_t count, Launch launch) {
    if (count == 0) return;
    check_cuda(cudaSetDevice(device), "cudaSetDevice");  // callers may be on any thread
    const bool host = on_host(data);
    float* buffer = data;
    if (host) {
      ensure_scratch(count);
      buffer = scratch;
      check_cuda(cudaMemcpyAsync(buffer, data, count * sizeof(float), cudaMemcpyHostToDevice, stream), "copy in");
    }
    run(what, launch(buffer));
    if (host) check_cuda(cudaMemcpy(data, buffer, count * sizeof(float), cudaMemcpyDeviceToHost), "copy out");
  }
};

NcclCommunicator::NcclCommunicator(int rank, int size, int device, gloo::rendezvous::Store& store, std::chrono::milliseconds timeout,
                                   Diagnosis diagnose)
    : state_(std::make_unique<State>()), rank_(rank), size_(size) {
  state_->device = device;
  state_->timeout = timeout;
  state_->diagnose = std::move(diagnose);
  check_cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device).c_str());
  check_cuda(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking), "cudaStreamCreate");

  ncclUniqueId id;
  if (rank == 0) {
    if (ncclGetUniqueId(&id) != ncclSuccess) throw CollectiveError("ncclGetUniqueId failed");
    const auto* bytes = reinterpret_cast<const char*>(&id);
    store.set("nccl/unique_id", std::vector<char>(bytes, bytes + sizeof id));
  } else {
    std::vector<char> bytes = store.get("nccl/unique_id");
    if (bytes.size() != sizeof id) throw CollectiveError("nccl: the unique id in the store has the wrong size");
    std::memcpy(&id, bytes.data(), sizeof id);
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t r = ncclCommInitRankConfig(&state_->comm, size, id, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress)
    throw CollectiveError(fmt::format("ncclCommInitRankConfig failed on rank {}: {}", rank, ncclGetErrorString(r)));
  state_->wait(fmt::format("communicator setup on rank {} of {}", rank, size), false);
  state_->ensure_scratch(1);
}

NcclCommunicator::~NcclCommunicator() {
  if (state_->comm != nullptr) ncclCommDestroy(state_->comm);
  if (state_->scratch != nullptr) cudaFree(state_->scratch);
  if (state_->stream != nullptr) cudaStreamDestroy(state_->stream);
}

void NcclCommunicator::allreduce(float* data, size_t count, ReduceOp op) {
  const ncclRedOp_t reduction = op == ReduceOp::kAvg ? ncclAvg : ncclSum;
  const std::string what = fmt::format("allreduce of {} floats on rank {}", count, rank_);
  state_->run_in_place(what, data, count, [&](float* buffer) {
    return ncclAllReduce(buffer, buffer, count, ncclFloat, reduction, state_->comm, state_->stream);
  });
}

void NcclCommunicator::broadcast(float* data, size_t count, int root) {
  const std::string what = fmt::format("broadcast of {} floats from rank {}", count, root);
  state_->run_in_place(what, data, count, [&](float* buffer) {
    return ncclBroadcast(buffer, buffer, count, ncclFloat, root, state_->comm, state_->stream);
  });
}

void NcclCommunicator::allgather(const float* input, float* output, size_t count) {
  check_cuda(cudaSetDevice(state_->device), "cudaSetDevice");  // callers may be on any thread
  const std::string what = fmt::format("allgather of {} floats", count);
  if (!on_host(input) && !on_host(output)) {
    state_->run(what, ncclAllGather(input, output, count, ncclFloat, state_->comm, state_->stream));
    return;
  }
  state_->ensure_scratch(count * (size_ + 1));
  float* in = state_->scratch + count * size_;
  check_cuda(cudaMemcpyAsync(in, input, count * sizeof(float), cudaMemcpyHostToDevice, state_->stream), "copy in");
  state_->run(what, ncclAllGather(in, state_->scratch, count, ncclFloat, state_->comm, state_->stream));
  check_cuda(cudaMemcpy(output, state_->scratch, count * size_ * sizeof(float), cudaMemcpyDeviceToHost), "copy out");
}

void NcclCommunicator::barrier() {
  check_cuda(cudaSetDevice(state_->device), "cudaSetDevice");  // callers may be on any thread
  state_->run("barrier", ncclAllReduce(state_->scratch, state_->scratch, 1, ncclFloat, ncclSum, state_->comm,
                                       state_->stream));
}

bool nccl_available() { return true; }

}  // namespace paddle::collective
