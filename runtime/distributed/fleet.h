#pragma once
// Fleet: the one face a training program uses for distributed training, in either mode, shaped
// like Paddle's paddle.distributed.fleet. The process's role and peers come from its
// environment (paddle-launch, or by hand: see topology.h).
//
// Collective (trainers average gradients in fused buckets while backward runs):
//
//   auto fleet = Fleet::init(/*is_collective=*/true);
//   auto model = fleet->distributed_model(net);    // placed on this rank's device, rank 0's weights
//   auto opt = fleet->distributed_optimizer(make_optimizer({"momentum"}), model);
//   for (...) { auto out = model.forward(x); ...; model.backward(dloss); opt.step(lr); opt.clear_grad(); }
//
// Parameter server (the model describes its tables; servers hold them, workers push and pull):
//
//   auto fleet = Fleet::init(/*is_collective=*/false, strategy);
//   if (fleet->is_server()) { fleet->init_server(tables, dir); fleet->run_server(); return 0; }
//   fleet->init_worker(tables);
//   ... fleet->parameter_store().pull_dense(table) / push_dense(table, grads) ...; fleet->ps_barrier();
//   fleet->stop_worker();
//
// parameter_store() carries the values (ps/parameter_store.h); server_control() steers where
// they live: the barrier, checkpoints and the end (ps/server_control.h). Both are the servers
// in a PS job, or the tables of a single process.
//
// The strategy (distributed_strategy.h) picks the PS mode, and mixed precision: its policy
// (runtime/nn/amp_policy.h) autocasts the execution's matrix products, and its loss scaling
// drives distributed_optimizer's LossScaler (runtime/nn/loss_scaler.h), whose step() then
// unscales the averaged gradients, checks them for inf/NaN in one fused kernel and skips the
// update when it finds any (an inf on one rank reaches every rank through the average, so all
// skip together).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/environment.h"
#include "ps/client/async_communicator.h"
#include "ps/client/client.h"
#include "ps/local_parameter_store.h"
#include "ps/parameter_store.h"
#include "ps/server/server.h"
#include "ps/server_control.h"
#include "ps/table_spec.h"
#include "runtime/core/execution.h"
#include "runtime/distributed/data_parallel.h"
#include "runtime/distributed/distributed_context.h"
#include "runtime/distributed/distributed_strategy.h"
#include "runtime/nn/loss_scaler.h"
#include "runtime/nn/optimizer.h"
#include "runtime/nn/sequential.h"

namespace paddle::runtime {

class DistributedModel {
 public:
  Tensor forward(const Tensor& x, bool training = true) { return net_.forward(x, training); }
  Tensor backward(const Tensor& dy) { return net_.backward(dy); }
  // Waits until every gradient is averaged over the workers.
  void synchronize();
  const std::vector<Parameter*>& parameters() const { return parameters_; }
  Sequential& net() { return net_; }
  // The gradient buckets; null with one worker.
  const DataParallel* data_parallel() const { return parallel_.get(); }
  // Seconds this worker has waited, in all, for its gradients to be averaged (the
  // communication the backward pass did not hide).
  double communication_seconds() const { return communication_seconds_; }

 private:
  friend class Fleet;
  DistributedModel(Sequential& net, std::unique_ptr<DataParallel> parallel)
      : net_(net), parameters_(net.parameters()), parallel_(std::move(parallel)) {}
  Sequential& net_;
  std::vector<Parameter*> parameters_;
  std::unique_ptr<DataParallel> parallel_;  // null with one worker
  double communication_seconds_ = 0;
};

class DistributedOptimizer {
 public:
  // Synchronizes the gradients, then updates the parameters; with AMP, first unscales the
  // gradients and returns false, without updating, for a step with inf/NaN in them.
  bool step(float lr);
  void clear_grad() { model_.net().zero_grad(); }
  Optimizer& inner() { return *optimizer_; }
  // What the loss (its gradient) is multiplied by before backward: the scaler's scale with AMP,
  // else 1.
  float loss_scale() const { return scaler_ ? scaler_->scale() : 1.0f; }
  // The loss scaler with AMP; null without.
  const LossScaler* scaler() const { return scaler_ ? &*scaler_ : nullptr; }

 private:
  friend class Fleet;
  DistributedOptimizer(std::unique_ptr<Optimizer> optimizer, DistributedModel& model, const kernels::Context& context,
                       std::optional<LossScaler> scaler)
      : optimizer_(std::move(optimizer)), model_(model), context_(context), scaler_(std::move(scaler)) {}
  std::unique_ptr<Optimizer> optimizer_;
  DistributedModel& model_;
  const kernels::Context& context_;  // where the gradients live
  std::optional<LossScaler> scaler_;
};

class Fleet {
 public:
  // Joins the job `env` describes. A collective job rendezvouses here; a PS job connects in
  // init_server / init_worker. Throws TopologyError (a ConfigError) naming the variables at
  // fault, or collective errors naming the ranks. Checks the strategy first, and throws
  // common::ConfigError naming the setting (as strategy.amp's names spell it) for a value out
  // of range or what this build cannot run where the model is: mixed precision off a CUDA
  // device or on parameter servers, and O2 or a 16-bit all-reduce, which are not built yet.
  static std::unique_ptr<Fleet> init(bool is_collective = true, DistributedStrategy strategy = {},
                                     const common::Environment& env = common::current_environment());
  ~Fleet();

  const Topology& topology() const { return topology_; }
  const DistributedStrategy& strategy() const { return strategy_; }
  // The environment the job was joined with (init's `env`): what the workloads read settings from.
  const common::Environment& environment() const { return env_; }
  int worker_index() const { return topology_.trainer_id; }
  int worker_num() const { return topology_.trainer_num; }
  bool is_worker() const { return topology_.is_worker(); }
  bool is_server() const { return topology_.is_server(); }
  bool is_first_worker() const { return topology_.is_first_worker(); }

  // Collective.
  void barrier();
  // The mean of a value (a loss) over the workers.
  float average(float value);
  DistributedContext& context();
  // Where this process says what it does, for its launcher (common/progress_page.h:
  // PADDLE_PROGRESS_FILE): the collectives mark it themselves, the training loop its steps.
  common::ProgressPage& progress() { return *progress_; }
  // A test's fault for this rank (test_fault.h: PADDLE_TEST_FAULT); none in a real job.
  const TestFault& test_fault() const { return test_fault_; }
  // PADDLE_STRAGGLER_FACTOR (the launcher's --straggler_factor): a rank whose busy time per step
  // stays this many times the job's median is a straggler (runtime/train/run/straggler_window.h);
  // 0: not judged. Default 2.
  double straggler_factor() const { return straggler_factor_; }
  // Where this rank's model runs (the GPU of FLAGS_selected_gpus with NCCL, unless the
  // strategy says use_cpu; else the CPU, always for parameter servers and their workers), with
  // the kernels PADDLE_CPU_KERNELS names. With strategy.amp on a GPU, its matrix products
  // autocast as the AMP policy says.
  Execution& execution();
  // Places `net` on execution() and gives every rank rank 0's parameters.
  DistributedModel distributed_model(Sequential& net);
  // Places the optimizer and gives every rank rank 0's optimizer state (a resumed run's); with
  // strategy.amp, its loss scaler.
  DistributedOptimizer distributed_optimizer(std::unique_ptr<Optimizer> optimizer, DistributedModel& model);

  // Parameter server: a server's role.
  // Builds this server's share of `tables` and binds its endpoint; with `dir`, loads the
  // checkpoint save_persistables wrote there.
  // `on_memory`, when given, is told the tables' memory after every save and shrink.
  void init_server(const ps::TableSpecs& tables, const std::string& dir = "",
                   std::function<void(const ps::ServerMemory&)> on_memory = {});
  // Serves until every worker has called stop_worker().
  void run_server();
  // This server's tables' memory (rows, value and index bytes per table); safe while
  // run_server() serves on another thread.
  ps::ServerMemory server_memory();

  // Parameter server: a worker's role.
  // Connects to every server (waiting for late ones, PADDLE_PS_CONNECT_TIMEOUT); a single
  // process instead keeps `tables` locally and trains sync (the other modes need servers).
  void init_worker(const ps::TableSpecs& tables);
  // Both throw std::logic_error before init_worker.
  ps::ParameterStore& parameter_store();
  ps::ServerControl& server_control();
  // The barrier of sync mode: every worker's pushes of this step are applied when it returns.
  // One of those pass_barriers() gave returns at once.
  void ps_barrier() {
    if (barriers_to_pass_ > 0) {
      --barriers_to_pass_;
      return;
    }
    common::ProgressPage::Scope at(*progress_, common::CollectiveKind::kBarrier, 0);
    server_control().barrier();
  }
  // A worker restarted in place (runtime/train/workloads/worker_progress.h): the next `n` barriers are ones
  // its dead self reached and the job has completed; it passes them without waiting.
  void pass_barriers(uint64_t n) { barriers_to_pass_ = n; }
  // Barriers still to pass so: what comes before them was done by the dead self.
  uint64_t barriers_to_pass() const { return barriers_to_pass_; }
  // Async mode: hands a step's gradients to the communicator thread; null in the other modes.
  ps::AsyncCommunicator* async_communicator() { return async_.get(); }
  // Every server writes its share of the tables into `dir` (one worker asks; the others need
  // not); a single process writes its tables as one server would. `mode` picks the sparse rows
  // (ps/table/save_mode.h): all, a base for serving, or the delta since the last save.
  void save_persistables(const std::string& dir, ps::SaveMode mode = ps::SaveMode::kAll);
  // Every server shrinks its sparse tables (Paddle's fleet.shrink()): show and click decay, rows
  // age a day, and rows under the delete threshold or unseen too long go (ps/table/ctr_accessor.h).
  // One worker asks; one report per server, its tables' rows before and after.
  std::vector<ps::ShrinkReport> shrink();
  // Sends what async mode still holds and tells the servers this worker is done.
  void stop_worker();

 private:
  Fleet(common::Environment env, Topology topology, DistributedStrategy strategy);

  common::Environment env_;
  Topology topology_;
  DistributedStrategy strategy_;
  std::unique_ptr<common::ProgressPage> progress_;
  TestFault test_fault_;
  double straggler_factor_ = 2.0;
  std::unique_ptr<DistributedContext> context_;  // collective
  std::unique_ptr<Execution> execution_;         // made on first use
  std::unique_ptr<ps::ParameterServer> server_;  // PS server
  std::unique_ptr<ps::PsClient> client_;         // PS worker with servers
  std::unique_ptr<ps::LocalParameterStore> local_;  // PS worker alone
  uint64_t barriers_to_pass_ = 0;
  std::unique_ptr<ps::AsyncCommunicator> async_;
};

}  // namespace paddle::runtime

namespace paddle {
// Paddle's spelling: paddle::fleet::Fleet.
namespace fleet = runtime;
}  // namespace paddle
