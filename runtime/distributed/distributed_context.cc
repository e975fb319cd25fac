#include "runtime/distributed/distributed_context.h"

#include <fmt/format.h>

#include "collective/gloo_communicator.h"
#include "collective/nccl_communicator.h"
#include "common/parse.h"

namespace paddle::runtime {

std::unique_ptr<DistributedContext> DistributedContext::from_environment(const Environment& env) {
  auto ctx = std::make_unique<DistributedContext>();
  ctx->topology_ = topology_from_environment(env);
  if (ctx->topology_.kind == JobKind::kParameterServer)
    throw TopologyError(fmt::format("this is a parameter-server job ({}), but the model trains collectively; use a PS "
                                    "model (wide_deep) or launch without --server_num/--servers",
                                    ctx->topology_.style));
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
        config.rank, ctx->topology_.trainer_num, ctx->device_.index, rendezvous->store(), config.timeout, who_left);
  } else {
    ctx->communicator_ = std::make_unique<collective::GlooCommunicator>(
        config.rank, ctx->topology_.trainer_num, rendezvous->store(), ip, config.timeout, who_left);
  }
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
