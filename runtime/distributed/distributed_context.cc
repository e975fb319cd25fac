#include "runtime/distributed/distributed_context.h"

#include <fmt/format.h>

#include "collective/gloo_communicator.h"
#include "collective/hierarchical_communicator.h"
#include "collective/nccl_communicator.h"
#include "collective/node_map.h"
#include "collective/progress_communicator.h"
#include "collective/shm_communicator.h"
#include "common/parse.h"

namespace paddle::runtime {
namespace {

// PADDLE_COLLECTIVE_SHM: 1 (the default) lets ranks on one node meet through shared memory.
bool shared_memory_allowed(const Environment& env) {
  const std::string value = common::get_env(env, "PADDLE_COLLECTIVE_SHM").value_or("1");
  if (value != "0" && value != "1")
    throw TopologyError(fmt::format("PADDLE_COLLECTIVE_SHM={} is not 0 (Gloo over TCP only) or 1 (shared memory "
                                    "among ranks on one node, the default)",
                                    value));
  return value == "1";
}

// The CPU communicator: shared memory when every rank is on this node, shared memory within
// nodes and Gloo among them when several nodes hold the same number (> 1) of ranks, else Gloo.
// Says once which it chose.
std::unique_ptr<collective::Communicator> cpu_communicator(const Environment& env, bool shm_allowed,
                                                           const Topology& topology,
                                                           collective::Rendezvous& rendezvous, const std::string& ip,
                                                           std::chrono::milliseconds timeout,
                                                           collective::Diagnosis who_left) {
  const int rank = topology.trainer_id, world = topology.trainer_num;
  auto& store = rendezvous.gloo_store();
  if (!shm_allowed) {
    fmt::print(stderr, "collective: Gloo over TCP among {} ranks (PADDLE_COLLECTIVE_SHM=0)\n", world);
    return std::make_unique<collective::GlooCommunicator>(rank, world, store, ip, timeout, who_left);
  }
  const auto nodes = collective::NodeMap::exchange(store, "nodes", rank, world, ip, timeout);
  collective::ShmOptions shm;
  shm.job_id = common::get_env(env, "PADDLE_JOB_ID").value_or("default");
  shm.generation = common::env_int(env, "PADDLE_RESTART_COUNT", 0);
  shm.timeout = timeout;
  const size_t per_node = nodes.nodes.front().size();
  if (nodes.nodes.size() == 1) {
    fmt::print(stderr, "collective: shared memory among the {} ranks of this node\n", world);
    return std::make_unique<collective::ShmCommunicator>(rank, world, store, shm, who_left);
  }
  if (nodes.even() && per_node > 1) {
    fmt::print(stderr, "collective: shared memory within each of {} nodes ({} ranks each), Gloo among them\n",
               nodes.nodes.size(), per_node);
    return std::make_unique<collective::HierarchicalCommunicator>(rank, world, nodes, store, ip, shm, who_left);
  }
  fmt::print(stderr, "collective: Gloo over TCP among {} ranks on {} nodes ({})\n", world, nodes.nodes.size(),
             nodes.even() ? "one rank per node" : "nodes with different numbers of ranks");
  return std::make_unique<collective::GlooCommunicator>(rank, world, store, ip, timeout, who_left);
}

}  // namespace

std::unique_ptr<DistributedContext> DistributedContext::from_environment(const Environment& env,
                                                                         common::ProgressPage& progress,
                                                                         const TestFault& fault) {
  auto ctx = std::make_unique<DistributedContext>();
  ctx->topology_ = topology_from_environment(env);
  if (ctx->topology_.kind == JobKind::kParameterServer)
    throw TopologyError(fmt::format("this is a parameter-server job ({}), but the model trains collectively; use a PS "
                                    "model (wide_deep) or launch without --server_num/--servers",
                                    ctx->topology_.style));
  const bool shm_allowed = shared_memory_allowed(env);
  std::string backend = common::get_env(env, "PADDLE_DISTRI_BACKEND").value_or("");
  const std::string gpus = common::get_env(env, "FLAGS_selected_gpus").value_or("");
  if (backend.empty() || backend == "auto") backend = (!gpus.empty() && collective::nccl_available()) ? "nccl" : "gloo";
  if (backend != "gloo" && backend != "nccl")
    throw collective::CollectiveError(fmt::format("PADDLE_DISTRI_BACKEND={} is not gloo, nccl or auto", backend));
  if (backend == "nccl") {
    const auto first = common::to_int(gpus.substr(0, gpus.find(',')));
    if (!gpus.empty() && (!first || *first < 0))
      throw TopologyError(fmt::format("FLAGS_selected_gpus={} is not a list of GPU ids", gpus));
    ctx->device_ = Device::cuda(static_cast<int>(first.value_or(0)));
  }
  if (ctx->topology_.kind != JobKind::kCollective || ctx->topology_.trainer_num == 1) return ctx;
  collective::RendezvousConfig config;
  config.rank = ctx->topology_.trainer_id;
  config.endpoints = ctx->topology_.trainer_endpoints;
  config.timeout = collective::collective_timeout_from(env);
  config.token = common::JobToken::from_environment(env, fmt::format("rank {}", config.rank));
  ctx->rendezvous_ = std::make_unique<collective::Rendezvous>(config);
  auto [ip, port] = common::parse_endpoint(ctx->topology_.current_endpoint, "PADDLE_CURRENT_ENDPOINT");
  auto* rendezvous = ctx->rendezvous_.get();
  auto who_left = [rendezvous] { return rendezvous->who_left(); };
  if (backend == "nccl") {
    ctx->communicator_ = std::make_unique<collective::NcclCommunicator>(
        config.rank, ctx->topology_.trainer_num, ctx->device_.index, rendezvous->gloo_store(), config.timeout, who_left);
  } else {
    ctx->communicator_ = cpu_communicator(env, shm_allowed, ctx->topology_, *rendezvous, ip, config.timeout, who_left);
  }
  ctx->communicator_ = std::make_unique<collective::ProgressCommunicator>(
      fault.wrap(std::move(ctx->communicator_), progress), progress);
  return ctx;
}

void DistributedContext::barrier() {
  if (communicator_) communicator_->barrier();
}

float DistributedContext::average(float value) {
  if (communicator_) communicator_->allreduce(&value, 1, collective::ReduceOp::kAvg);
  return value;
}

}  // namespace paddle::runtime
