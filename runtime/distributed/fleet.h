#pragma once
// Fleet: the few calls a training program needs to run data-parallel, shaped like Paddle's
// paddle.distributed.fleet:
//
//   auto fleet = paddle::fleet::Fleet::init(/*is_collective=*/true);
//   auto model = fleet->distributed_model(net);             // parameters broadcast from rank 0
//   auto opt = fleet->distributed_optimizer(make_optimizer({"momentum"}), model);
//   for (...) { auto out = model.forward(x); ...; model.backward(dloss); opt.step(lr); opt.clear_grad(); }
//
// The process's role and peers come from its environment (paddle-launch, or by hand: see
// topology.h). Gradients are averaged in fused buckets while backward runs.

#include <memory>

#include "runtime/distributed/data_parallel.h"
#include "runtime/distributed/distributed_context.h"
#include "runtime/nn/optimizer.h"
#include "runtime/nn/sequential.h"

namespace paddle::fleet {

struct DistributedStrategy {
  double fuse_grad_size_in_MB = 25;  // gradient bucket size
  bool a_sync = false;               // parameter-server modes: not available yet
  int k_steps = 0;
};

class DistributedModel {
 public:
  runtime::Tensor forward(const runtime::Tensor& x, bool training = true) { return net_.forward(x, training); }
  runtime::Tensor backward(const runtime::Tensor& dy) { return net_.backward(dy); }
  // Waits until every gradient is averaged over the workers.
  void synchronize();
  std::vector<runtime::Parameter*> parameters() { return net_.parameters(); }
  runtime::Sequential& net() { return net_; }

 private:
  friend class Fleet;
  DistributedModel(runtime::Sequential& net, std::unique_ptr<runtime::DataParallel> parallel)
      : net_(net), parallel_(std::move(parallel)) {}
  runtime::Sequential& net_;
  std::unique_ptr<runtime::DataParallel> parallel_;  // null with one worker
};

class DistributedOptimizer {
 public:
  // Synchronizes the gradients, then updates the parameters.
  void step(float lr);
  void clear_grad() { model_.net().zero_grad(); }
  runtime::Optimizer& inner() { return *optimizer_; }

 private:
  friend class Fleet;
  DistributedOptimizer(std::unique_ptr<runtime::Optimizer> optimizer, DistributedModel& model)
      : optimizer_(std::move(optimizer)), model_(model) {}
  std::unique_ptr<runtime::Optimizer> optimizer_;
  DistributedModel& model_;
};

class Fleet {
 public:
  // Joins the job described by the environment. Throws runtime::TopologyError or
  // collective::CollectiveError naming what is wrong.
  static std::unique_ptr<Fleet> init(bool is_collective = true, DistributedStrategy strategy = {});

  int worker_index() const { return context_->rank(); }
  int worker_num() const { return context_->world(); }
  bool is_worker() const { return context_->topology().is_worker(); }
  bool is_server() const { return context_->topology().is_server(); }
  bool is_first_worker() const { return context_->topology().is_first_worker(); }
  void barrier() { context_->barrier(); }
  // The mean of a value (a loss) over the workers.
  float average(float value) { return context_->average(value); }

  DistributedModel distributed_model(runtime::Sequential& net);
  DistributedOptimizer distributed_optimizer(std::unique_ptr<runtime::Optimizer> optimizer, DistributedModel& model);

 private:
  Fleet(std::unique_ptr<runtime::DistributedContext> context, DistributedStrategy strategy)
      : context_(std::move(context)), strategy_(strategy) {}
  std::unique_ptr<runtime::DistributedContext> context_;
  DistributedStrategy strategy_;
};

}  // namespace paddle::fleet
