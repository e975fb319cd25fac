#pragma once
// DataParallel: keeps a model's replicas identical across the ranks of a communicator.
//
// At start the parameters are broadcast from rank 0. During backward the model reports
// parameters whose gradients are final; they are packed into buckets (in the order backward
// completes them, up to bucket_bytes each, 25 MB by default) and each full bucket is averaged
// with one allreduce on a communication thread while backward goes on. finish_step() waits only
// for the buckets still in flight.
//
// Buckets live on the model's device. On the CPU, where the communicator offers it, a bucket is a
// ReduceBuffer (collective/communicator.h; shared memory on one node), reduced where it lies
// rather than copied into the communicator's memory and back; where it cannot make one (a small
// /dev/shm), every rank says why on stderr and keeps its buckets private. On the CPU each
// parameter's gradient lives in its bucket (Tensor::over) for the DataParallel's life, so backward
// writes it where the allreduce reads it and the optimizer reads the average where the allreduce
// left it: nothing is packed or unpacked. A gradient tensor replaced since then is copied in and
// out instead. On a CUDA device the packing copies are queued on the
// model's stream and the communication thread waits for a bucket's event before reducing it in
// device memory (NCCL), so backward kernels and allreduces overlap on the GPU too.

#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collective/communicator.h"
#include "common/background_thread.h"
#include "kernels/event.h"
#include "runtime/nn/sequential.h"

namespace paddle::runtime {

class DataParallel {
 public:
  static constexpr size_t kDefaultBucketBytes = 25u << 20;

  // `execution` is where `model` was placed (null: the CPU). Throws std::invalid_argument when
  // the communicator cannot reduce memory of the model's device (Gloo and a CUDA model).
  DataParallel(Sequential& model, collective::Communicator& comm, size_t bucket_bytes = kDefaultBucketBytes,
               Execution* execution = nullptr);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  void broadcast_parameters();  // from rank 0, also the buffers (BatchNorm statistics)
  void finish_step();           // every gradient averaged; rethrows a communication error
  size_t bucket_count() const { return buckets_.size(); }
  size_t shared_bucket_count() const;  // those reduced where they lie
  size_t tensor_count() const { return bucket_of_.size(); }

 private:
  struct Bucket {
    std::vector<Parameter*> params;
    int64_t floats = 0;
    Tensor buffer;  // unless `shared`
    std::unique_ptr<collective::ReduceBuffer> shared;
    float* data() { return shared ? shared->data() : buffer.ptr(); }
    std::unique_ptr<kernels::Event> packed;  // CUDA: the copies into buffer are done
    size_t waiting = 0;  // parameters not yet ready this step
    bool queued = false;
  };

  void place_gradients_in_buckets();
  const float* place_of(const Parameter* p);  // where p's gradient lies in its bucket
  bool in_bucket(const Parameter* p);         // p's gradient tensor is still over that place
  void pack(Parameter* p);                    // copies a gradient not in its bucket there
  void unpack(Bucket& b);                     // and the average back
  void on_ready(const std::vector<Parameter*>& params);
  void enqueue(size_t bucket);
  void communicate(const std::stop_token& stop);

  Sequential& model_;
  collective::Communicator& comm_;
  Execution* execution_;
  const kernels::Context& context_;  // the execution's, or the host
  std::vector<Bucket> buckets_;
  std::map<const Parameter*, std::pair<size_t, int64_t>> bucket_of_;  // bucket, offset

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<size_t> queue_;
  size_t in_flight_ = 0;
  std::exception_ptr error_;
  common::BackgroundThread thread_;
};

}  // namespace paddle::runtime
