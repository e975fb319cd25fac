#include "runtime/distributed/fleet.h"

#include <chrono>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "common/parse.h"

namespace paddle::runtime {
namespace {

ps::ClientOptions client_options(const common::Environment& env) {
  ps::ClientOptions options;
  options.connect_timeout = common::env_seconds(env, "PADDLE_PS_CONNECT_TIMEOUT", std::chrono::seconds(300));
  options.request_timeout = common::env_seconds(env, "PADDLE_PS_REQUEST_TIMEOUT", std::chrono::seconds(300));
  options.token = common::JobToken::from_environment(env, "this worker");
  return options;
}

void check_ps_strategy(const PsStrategy& ps) {
  if (ps.mode == PsMode::kGeo && ps.k_steps <= 0)
    throw common::ConfigError(fmt::format("a_sync_configs.k_steps: {} is not a positive step count, which GEO sends "
                                          "every k_steps steps needs",
                                          ps.k_steps));
  if (ps.send_queue_size < 1)
    throw common::ConfigError(fmt::format("a_sync_configs.send_queue_size: {} is less than 1", ps.send_queue_size));
  if (ps.max_merge_var_num < 1)
    throw common::ConfigError(fmt::format("a_sync_configs.max_merge_var_num: {} is less than 1", ps.max_merge_var_num));
}

// Its values, and what this build can run of it before the model's device is known.
void check_amp_options(const AmpOptions& amp, bool is_collective) {
  const AmpSettingNames& names = amp.names;
  if (!is_collective)
    throw common::ConfigError(fmt::format("{}: parameter-server training runs in float32 only; turn it off, or train "
                                          "collectively on GPUs",
                                          names.enabled));
  check_loss_scaling(amp.scaling, names.group);
  check_amp_policy(amp.policy, names.group);
  if (amp.allreduce_dtype == DType::kInt64)
    throw common::ConfigError(fmt::format("{}: int64 is not float32, float16 or bfloat16", names.allreduce_dtype));
  if (amp.policy.level == AmpLevel::kO2)
    throw common::ConfigError(fmt::format("{}: O2 (16-bit parameters with float32 master weights) is not built yet; "
                                          "use O1",
                                          names.level));
  if (amp.allreduce_dtype != DType::kFloat32)
    throw common::ConfigError(fmt::format("{}: {} all-reduce is not built yet; use float32", names.allreduce_dtype,
                                          dtype_name(amp.allreduce_dtype)));
}

}  // namespace

Fleet::Fleet(common::Environment env, Topology topology, DistributedStrategy strategy)
    : env_(std::move(env)),
      topology_(std::move(topology)),
      strategy_(strategy),
      progress_(common::ProgressPage::from_environment(env_)),
      test_fault_(TestFault::from_environment(env_, topology_.trainer_id)) {
  if (const auto factor = common::get_env(env_, "PADDLE_STRAGGLER_FACTOR"); factor && !factor->empty()) {
    const auto value = common::to_finite_double(*factor);
    if (!value || *value < 0)
      throw common::ConfigError(fmt::format("PADDLE_STRAGGLER_FACTOR={} is not a factor of 0 (not judged) or more", *factor));
    straggler_factor_ = *value;
  }
}

Fleet::~Fleet() = default;

std::unique_ptr<Fleet> Fleet::init(bool is_collective, DistributedStrategy strategy, const common::Environment& env) {
  Topology topology = topology_from_environment(env);
  if (is_collective && topology.kind == JobKind::kParameterServer)
    throw TopologyError(fmt::format("this is a parameter-server job ({}), but the program asked for collective "
                                    "training; launch without --server_num/--servers or call Fleet::init(false)",
                                    topology.style));
  if (!is_collective && topology.kind == JobKind::kCollective)
    throw TopologyError(fmt::format("this is a collective job ({}), but the program asked for parameter servers; "
                                    "launch with --server_num/--worker_num",
                                    topology.style));
  check_ps_strategy(strategy.ps);
  if (strategy.amp) check_amp_options(*strategy.amp, is_collective);
  std::unique_ptr<Fleet> fleet(new Fleet(env, std::move(topology), strategy));
  if (is_collective) fleet->context_ = DistributedContext::from_environment(env, *fleet->progress_, fleet->test_fault_);
  if (strategy.amp && !fleet->execution().device().is_cuda())
    throw common::ConfigError(fmt::format("{}: mixed precision needs a CUDA device, and this rank's model is on {}; turn "
                                          "it off to train in float32",
                                          strategy.amp->names.enabled, fleet->execution().device().to_string()));
  return fleet;
}

DistributedContext& Fleet::context() {
  if (!context_) throw std::logic_error("Fleet::context: this fleet was initialized for parameter servers");
  return *context_;
}

void Fleet::barrier() { context().barrier(); }

float Fleet::average(float value) { return context().average(value); }

Execution& Fleet::execution() {
  if (!execution_) {
    const std::optional<std::string> cpu = common::get_env(env_, "PADDLE_CPU_KERNELS");
    const auto c_str = [](const std::optional<std::string>& value) { return value ? value->c_str() : nullptr; };
    const std::string choice_cache =
        kernels::choice_cache_from(c_str(common::get_env(env_, "PADDLE_KERNEL_CACHE")),
                                   c_str(common::get_env(env_, "XDG_CACHE_HOME")), c_str(common::get_env(env_, "HOME")));
    // A parameter-server process has no collective context: it computes on the CPU.
    const bool cpu_only = strategy_.use_cpu || !context_;
    execution_ = std::make_unique<Execution>(cpu_only ? Device::cpu() : context().device(), strategy_.tf32,
                                             kernels::cpu_kernels_from(c_str(cpu)), choice_cache);
    if (strategy_.amp && execution_->device().is_cuda()) {
      const AmpPolicy& policy = strategy_.amp->policy;
      if (policy.runs_in_half("matmul")) execution_->set_matmul_autocast(policy.dtype);
      if (policy.runs_in_half("conv2d")) execution_->set_conv_autocast(policy.dtype);
    }
  }
  return *execution_;
}

DistributedModel Fleet::distributed_model(Sequential& net) {
  net.place(execution());
  std::unique_ptr<DataParallel> parallel;
  if (auto* comm = context().communicator()) {
    parallel = std::make_unique<DataParallel>(net, *comm, static_cast<size_t>(strategy_.fuse_grad_size_in_MB * (1 << 20)),
                                              &execution());
    parallel->broadcast_parameters();
  }
  return DistributedModel(net, std::move(parallel));
}

DistributedOptimizer Fleet::distributed_optimizer(std::unique_ptr<Optimizer> optimizer, DistributedModel& model) {
  std::optional<LossScaler> scaler;
  if (strategy_.amp) scaler.emplace(strategy_.amp->scaling);
  optimizer->place(execution());
  if (auto* comm = context().communicator()) {
    optimizer->create_state(model.parameters());
    for (auto& [name, state] : optimizer->state()) comm->broadcast(state.ptr(), static_cast<size_t>(state.numel()), 0);
    float steps = static_cast<float>(optimizer->steps());  // exact below 2^24 steps
    comm->broadcast(&steps, 1, 0);
    optimizer->set_steps(static_cast<int64_t>(steps));
  }
  return DistributedOptimizer(std::move(optimizer), model, execution().context(), std::move(scaler));
}

void Fleet::init_server(const ps::TableSpecs& tables, const std::string& dir,
                        std::function<void(const ps::ServerMemory&)> on_memory) {
  if (!is_server()) throw std::logic_error("Fleet::init_server called on a worker");
  ps::ServerOptions options;
  const common::Endpoint endpoint = common::parse_endpoint(topology_.current_endpoint, "this server's endpoint");
  options.ip = endpoint.host;
  options.port = endpoint.port;
  options.server_index = topology_.server_index;
  options.server_count = static_cast<int>(topology_.server_endpoints.size());
  options.workers = topology_.trainer_num;
  options.sync = strategy_.ps.mode == PsMode::kSync;
  options.token = common::JobToken::from_environment(env_, "this parameter server");
  options.limits = ps::ConnectionLimits::from_environment(env_);
  options.on_memory = std::move(on_memory);
  server_ = std::make_unique<ps::ParameterServer>(
      options, ps::build_server_tables(tables, options.server_index, options.server_count));
  if (!dir.empty()) server_->load(dir);
}

void Fleet::run_server() {
  if (!server_) throw std::logic_error("Fleet::run_server before init_server");
  progress_->enter(common::Phase::kServing);
  server_->run();
  progress_->enter(common::Phase::kFinished);
  fmt::print("all workers stopped; server {} exits\n", topology_.current_endpoint);
}

ps::ServerMemory Fleet::server_memory() {
  if (!server_) throw std::logic_error("Fleet::server_memory before init_server");
  return server_->memory();
}

void Fleet::init_worker(const ps::TableSpecs& tables) {
  if (!is_worker()) throw std::logic_error("Fleet::init_worker called on a server");
  if (topology_.kind == JobKind::kSingle) {
    if (strategy_.ps.mode != PsMode::kSync)
      throw common::ConfigError("async and GEO parameter-server training need servers (paddle-launch "
                                "--server_num); one process trains sync");
    local_ = std::make_unique<ps::LocalParameterStore>(tables);
    return;
  }
  ps::ClientOptions options = client_options(env_);
  options.worker_index = static_cast<uint32_t>(topology_.trainer_id);
  client_ = std::make_unique<ps::PsClient>(topology_.server_endpoints, tables, options);
  if (strategy_.ps.mode == PsMode::kAsync)
    async_ = std::make_unique<ps::AsyncCommunicator>(
        std::make_unique<ps::PsClient>(topology_.server_endpoints, tables, options), tables,
        static_cast<size_t>(strategy_.ps.send_queue_size),
        static_cast<size_t>(strategy_.ps.max_merge_var_num));
}

ps::ParameterStore& Fleet::parameter_store() {
  if (client_) return *client_;
  if (local_) return *local_;
  throw std::logic_error("Fleet::parameter_store before init_worker");
}

ps::ServerControl& Fleet::server_control() {
  if (client_) return *client_;
  if (local_) return *local_;
  throw std::logic_error("Fleet::server_control before init_worker");
}

void Fleet::save_persistables(const std::string& dir, ps::SaveMode mode) { server_control().save(dir, mode); }

std::vector<ps::ShrinkReport> Fleet::shrink() { return server_control().shrink(); }

void Fleet::stop_worker() {
  if (async_) async_->flush();
  async_.reset();
  if (client_ || local_) server_control().stop_worker();
}

void DistributedModel::synchronize() {
  if (!parallel_) return;
  const auto start = std::chrono::steady_clock::now();
  parallel_->finish_step();
  communication_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool DistributedOptimizer::step(float lr) {
  model_.synchronize();
  if (scaler_ && !scaler_->unscale_and_update(context_, model_.parameters())) return false;
  optimizer_->step(model_.parameters(), lr);
  return true;
}

}  // namespace paddle::runtime
