#include "distributed_context.h"

#include <fmt/format.h>

#include "gloo_communicator.h"

namespace paddle::runtime {

std::unique_ptr<DistributedContext> DistributedContext::from_environment(const Environment& env) {
  auto ctx = std::make_unique<DistributedContext>();
  ctx->topology_ = topology_from_environment(env);
  if (ctx->topology_.kind != JobKind::kCollective || ctx->topology_.trainer_num == 1) return ctx;
  auto backend = env.count("PADDLE_DISTRI_BACKEND") ? env.at("PADDLE_DISTRI_BACKEND") : std::string("gloo");
  if (backend != "gloo" && backend != "auto")
    throw collective::CollectiveError(fmt::format(
        "PADDLE_DISTRI_BACKEND={}: this build trains on CPU with the gloo backend only", backend));
  collective::RendezvousConfig config;
  config.rank = ctx->topology_.trainer_id;
  config.endpoints = ctx->topology_.trainer_endpoints;
  auto timeout = env.find("PADDLE_COLLECTIVE_TIMEOUT");
  config.timeout = collective::collective_timeout_from(timeout == env.end() ? nullptr : timeout->second.c_str());
  ctx->rendezvous_ = std::make_unique<collective::Rendezvous>(config);
  auto [ip, port] = collective::split_endpoint(ctx->topology_.current_endpoint);
  auto* rendezvous = ctx->rendezvous_.get();
  ctx->communicator_ = std::make_unique<collective::GlooCommunicator>(
      config.rank, ctx->topology_.trainer_num, rendezvous->store(), ip, config.timeout,
      [rendezvous] { return rendezvous->who_left(); });
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
