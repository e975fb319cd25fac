#pragma once
// DistributedContext: this process's place in the job and its communicator. Built from the
// environment: a single process needs nothing; a collective job rendezvouses through rank 0's
// store (PADDLE_COLLECTIVE_TIMEOUT, default 300 s) and connects the backend. The backend also
// decides where the model runs: NCCL (PADDLE_DISTRI_BACKEND=nccl, or auto with
// FLAGS_selected_gpus set in a CUDA build) on the first of FLAGS_selected_gpus, Gloo on the CPU.
// On the CPU, ranks that share a node meet through shared memory: all on one node, a
// ShmCommunicator; several nodes with equal numbers (> 1) of ranks, a HierarchicalCommunicator;
// otherwise, or with PADDLE_COLLECTIVE_SHM=0, plain Gloo. Each rank says on stderr which it chose.
// Every collective is marked on the process's progress page (collective/progress_communicator.h).

#include <cstdio>
#include <memory>

#include "collective/communicator.h"
#include "collective/rendezvous.h"
#include "common/progress_page.h"
#include "runtime/core/device.h"
#include "runtime/distributed/test_fault.h"
#include "runtime/distributed/topology.h"

namespace paddle::runtime {

class DistributedContext {
 public:
  // Throws TopologyError or CollectiveError with the variables or ranks at fault. `progress`
  // must outlive the context; `fault` is a test's (test_fault.h).
  static std::unique_ptr<DistributedContext> from_environment(const Environment& env, common::ProgressPage& progress,
                                                              const TestFault& fault = {});

  const Topology& topology() const { return topology_; }
  int rank() const { return topology_.trainer_id; }
  int world() const { return topology_.trainer_num; }
  // Null in a single-process job.
  collective::Communicator* communicator() { return communicator_.get(); }
  // Where this rank's model should run (a single process too).
  const Device& device() const { return device_; }

  void barrier();
  // The mean of `value` over all ranks (itself in a single process).
  float average(float value);

 private:
  Topology topology_;
  Device device_;
  std::unique_ptr<collective::Rendezvous> rendezvous_;
  std::unique_ptr<collective::Communicator> communicator_;
};

}  // namespace paddle::runtime
