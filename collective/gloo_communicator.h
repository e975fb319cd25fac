#pragma once
// GlooCommunicator: the CPU backend, Gloo's TCP transport with a full mesh built through the
// job's key-value store.
//
// Allreduce takes two paths: messages up to kSmallAllreduceBytes run a gloo::AllreduceRing
// built once per element count over a staging buffer (Gloo's functional allreduce pays about a
// millisecond per call here, which would dominate a per-step loss average); larger ones use the
// functional gloo::allreduce, whose segment pipelining is faster for big buckets.

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>

#include <chrono>
#include <functional>
#include <map>
#include <vector>

#include <gloo/algorithm.h>
#include <memory>

#include "collective/communicator.h"

namespace paddle::collective {

class GlooCommunicator : public Communicator {
 public:

  // `ip`: the address this rank listens on for its peers.
  GlooCommunicator(int rank, int size, gloo::rendezvous::Store& store, const std::string& ip,
                   std::chrono::milliseconds timeout, Diagnosis diagnose = {});

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "gloo"; }

  void allreduce(float* data, size_t count, ReduceOp op) override;
  void broadcast(float* data, size_t count, int root) override;
  void allgather(const float* input, float* output, size_t count) override;
  void barrier() override;

 private:
  gloo::Algorithm& small_ring(size_t count);
  [[noreturn]] void fail(const std::string& operation, const std::exception& e) const;

  static constexpr size_t kSmallAllreduceBytes = 1 << 20;
  static constexpr size_t kMaxCachedRings = 32;

  int rank_;
  int size_;
  std::vector<float> staging_;                                      // small allreduces run here
  std::map<size_t, std::unique_ptr<gloo::Algorithm>> small_rings_;  // by element count
  std::chrono::milliseconds timeout_;
  Diagnosis diagnose_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  uint32_t next_tag_ = 0;
};

}  // namespace paddle::collective
