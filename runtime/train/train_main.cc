// train: the runtime's training program, the same binary for every rank and role.
//   train [--config FILE] [--set key=value ...]
// Reads its place in the job from the environment (paddle-launch sets it; see
// runtime/distributed/topology.h for starting it by hand) and goes through Fleet as a user's
// program would: collective models as trainers, parameter-server models as servers or workers.
// Writes OUTPUT_DIR/metrics.json.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/environment.h"
#include "common/error.h"
#include "runtime/distributed/fleet.h"
#include "runtime/train/ctr_trainer.h"
#include "runtime/train/train_config.h"
#include "runtime/train/trainer.h"

namespace paddle::runtime {
namespace {

bool is_parameter_server_model(const nlohmann::json& config) { return config.at("model") == "wide_deep"; }

// A server serves its share of the model's tables until every worker stopped; a worker trains
// against the servers; a lone process trains against local tables.
int run_parameter_server_model(const nlohmann::json& config, const common::Environment& env) {
  auto fleet = Fleet::init(/*is_collective=*/false, ps_strategy(config), env);
  const ps::TableSpecs tables = wide_deep_tables(config);
  if (fleet->is_server()) {
    fleet->init_server(tables, config.at("ps").at("init_dir"));
    fleet->run_server();
    return 0;
  }
  fleet->init_worker(tables);
  train_ctr(config, *fleet);
  const std::string save_dir = config.at("ps").at("save_dir");
  if (fleet->is_first_worker() && !save_dir.empty()) fleet->save_persistables(save_dir);
  fleet->stop_worker();
  return 0;
}

int run_collective_model(const nlohmann::json& config, const common::Environment& env) {
  DistributedStrategy strategy;
  strategy.fuse_grad_size_in_MB = config.at("bucket_mb");
  strategy.tf32 = config.at("tf32");
  auto fleet = Fleet::init(/*is_collective=*/true, strategy, env);
  const int restart_count = static_cast<int>(common::env_int(env, "PADDLE_RESTART_COUNT", 0));
  fmt::print("train: rank {} of {} ({})\n", fleet->worker_index(), fleet->worker_num(), fleet->topology().style);
  train(config, fleet->context(), restart_count);
  return 0;
}

}  // namespace
}  // namespace paddle::runtime

int main(int argc, char** argv) {
  using namespace paddle;
  CLI::App app{"train: data-parallel training of the models in configs/*.json", "train"};
  std::string config_path;
  std::vector<std::string> overrides;
  app.add_option("--config", config_path, "JSON config (default: the built-in Fashion-MNIST CNN)");
  app.add_option("--set", overrides, "Override a config key: --set optimizer.lr=0.1 (repeatable)");
  CLI11_PARSE(app, argc, argv);

  try {
    const nlohmann::json config = runtime::load_train_config(config_path, overrides);
    const common::Environment env = common::current_environment();
    if (runtime::is_parameter_server_model(config)) return runtime::run_parameter_server_model(config, env);
    return runtime::run_collective_model(config, env);
  } catch (const runtime::NanLossError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return e.exit_code();
  } catch (const common::ConfigError& e) {
    fmt::print(stderr, "train: config error: {}\n", e.what());
    return e.exit_code();
  } catch (const common::Error& e) {
    fmt::print(stderr, "train: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "train: {}\n", e.what());
    return 1;
  }
}
