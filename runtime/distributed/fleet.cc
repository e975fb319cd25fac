#include "runtime/distributed/fleet.h"

#include <stdexcept>

namespace paddle::fleet {

std::unique_ptr<Fleet> Fleet::init(bool is_collective, DistributedStrategy strategy) {
  if (strategy.a_sync || strategy.k_steps > 0 || !is_collective)
    throw std::invalid_argument("fleet: parameter-server training (a_sync, k_steps, is_collective=false) is not "
                                "available in this build");
  auto context = runtime::DistributedContext::from_environment(runtime::current_environment());
  return std::unique_ptr<Fleet>(new Fleet(std::move(context), strategy));
}

DistributedModel Fleet::distributed_model(runtime::Sequential& net) {
  std::unique_ptr<runtime::DataParallel> parallel;
  if (auto* comm = context_->communicator()) {
    parallel = std::make_unique<runtime::DataParallel>(net, *comm,
                                                       static_cast<size_t>(strategy_.fuse_grad_size_in_MB * (1 << 20)));
    parallel->broadcast_parameters();
  }
  return DistributedModel(net, std::move(parallel));
}

DistributedOptimizer Fleet::distributed_optimizer(std::unique_ptr<runtime::Optimizer> optimizer,
                                                  DistributedModel& model) {
  return DistributedOptimizer(std::move(optimizer), model);
}

void DistributedModel::synchronize() {
  if (parallel_) parallel_->finish_step();
}

void DistributedOptimizer::step(float lr) {
  model_.synchronize();
  optimizer_->step(model_.parameters(), lr);
}

}  // namespace paddle::fleet
