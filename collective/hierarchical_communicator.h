#pragma once
// HierarchicalCommunicator: the collectives of a job with several ranks on each of several
// nodes. Within a node the ranks meet through shared memory (ShmCommunicator); across nodes
// only one leader per node (its lowest rank) talks, over Gloo. An allreduce is a shared-memory
// allreduce on each node, a Gloo allreduce of the node sums among the leaders, and a
// shared-memory broadcast from each leader; the result is bit-identical on every rank.
// The nodes must hold equal numbers of ranks (NodeMap::even()).

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "collective/communicator.h"
#include "collective/gloo_communicator.h"
#include "collective/node_map.h"
#include "collective/shm_communicator.h"

namespace paddle::collective {

class HierarchicalCommunicator : public Communicator {
 public:

  // `shm` gives the segment's naming and timeout; its key prefix, names and rank are this
  // node's. `ip`: where this rank listens, should it lead its node. Throws CollectiveError.
  HierarchicalCommunicator(int rank, int size, const NodeMap& nodes, gloo::rendezvous::Store& store,
                           const std::string& ip, const ShmOptions& shm, Diagnosis diagnose = {});

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "shm+gloo"; }

  void allreduce(float* data, size_t count, ReduceOp op) override;
  void broadcast(float* data, size_t count, int root) override;
  void allgather(const float* input, float* output, size_t count) override;
  void barrier() override;

 private:
  bool leads() const { return leaders_ != nullptr; }

  int rank_;
  int size_;
  NodeMap nodes_;
  int node_;
  std::unique_ptr<ShmCommunicator> local_;
  std::unique_ptr<GlooCommunicator> leaders_;  // leaders only
  std::vector<float> node_block_;              // allgather's staging: this node's ranks' inputs
  std::vector<float> gathered_;                // allgather's staging, leaders only
};

}  // namespace paddle::collective
