// train: the runtime's training program, the same binary for every rank.
//   train [--config FILE] [--set key=value ...]
// Reads its place in the job from the environment (paddle-launch sets it; see topology.h for
// starting it by hand), trains the configured model and writes OUTPUT_DIR/metrics.json.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "runtime/nn/checkpoint.h"
#include "ps/client.h"
#include "runtime/train/ctr_trainer.h"
#include "ps/local_parameter_store.h"
#include "collective/rendezvous.h"
#include "ps/server.h"
#include "runtime/data/dataset.h"
#include "runtime/distributed/distributed_context.h"
#include "runtime/train/train_config.h"
#include "runtime/train/trainer.h"
#include "common/parse.h"

using namespace paddle::runtime;
namespace ps = paddle::ps;
namespace common = paddle::common;

namespace {

// Parameter-server roles of the wide&deep model: a server serves its tables until the workers
// stop; a worker trains against the servers; a lone process uses local tables.
int run_ctr(const nlohmann::json& config, const Environment& env) {
  const std::string mode = config.at("ps").at("mode");
  const Topology topo = topology_from_environment(env);
  const std::string init_dir = config.at("ps").at("init_dir");
  if (topo.kind == JobKind::kSingle) {
    if (mode != "sync") throw common::ConfigError(fmt::format("ps.mode {} needs parameter servers; one process trains sync", mode));
    auto tables = ctr_server_tables(config, 0, 1);
    ps::LocalParameterStore store(std::move(tables.dense), std::move(tables.sparse));
    train_ctr(config, store, 0, 1, true);
    return 0;
  }
  if (topo.kind != JobKind::kParameterServer)
    throw common::ConfigError("model wide_deep trains in PS mode (paddle-launch --server_num/--worker_num) or as one process");
  if (topo.is_server()) {
    ps::ServerOptions options;
    auto [ip, port] = common::parse_endpoint(topo.current_endpoint, "this server's endpoint");
    options.ip = ip;
    options.port = port;
    options.server_index = topo.server_index;
    options.server_count = static_cast<int>(topo.server_endpoints.size());
    options.workers = topo.trainer_num;
    options.sync = mode == "sync";
    ps::ParameterServer server(options, ctr_server_tables(config, options.server_index, options.server_count));
    if (!init_dir.empty()) server.load(init_dir);  // init_server(dir)
    server.run();                                   // run_server(): until every worker stopped
    fmt::print("all workers stopped; server {} exits\n", topo.current_endpoint);
    return 0;
  }
  ps::ClientOptions options;
  options.connect_timeout = common::env_seconds(env, "PADDLE_PS_CONNECT_TIMEOUT", std::chrono::seconds(300));
  options.request_timeout = common::env_seconds(env, "PADDLE_PS_REQUEST_TIMEOUT", std::chrono::seconds(300));
  ps::PsClient client(topo.server_endpoints, options);  // init_worker()
  std::unique_ptr<ps::AsyncCommunicator> async;
  if (mode == "async")
    async = std::make_unique<ps::AsyncCommunicator>(std::make_unique<ps::PsClient>(topo.server_endpoints, options),
                                                    config.at("ps").at("send_queue_size"),
                                                    config.at("ps").at("max_merge_var_num"));
  train_ctr(config, client, topo.trainer_id, topo.trainer_num, topo.trainer_id == 0 && init_dir.empty(), async.get());
  if (async) async->flush();
  async.reset();
  const std::string save_dir = config.at("ps").at("save_dir");
  if (topo.trainer_id == 0 && !save_dir.empty()) client.save(save_dir);  // save_persistables
  client.stop_worker();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"train: data-parallel training of the models in configs/*.json", "train"};
  std::string config_path;
  std::vector<std::string> overrides;
  app.add_option("--config", config_path, "JSON config (default: the built-in Fashion-MNIST CNN)");
  app.add_option("--set", overrides, "Override a config key: --set optimizer.lr=0.1 (repeatable)");
  CLI11_PARSE(app, argc, argv);

  try {
    nlohmann::json config = load_train_config(config_path, overrides);
    auto env = current_environment();
    if (config.at("model") == "wide_deep") return run_ctr(config, env);
    auto ctx = DistributedContext::from_environment(env);
    const int restart_count = static_cast<int>(common::env_int(env, "PADDLE_RESTART_COUNT", 0));
    fmt::print("train: rank {} of {} ({})\n", ctx->rank(), ctx->world(), ctx->topology().style);
    train(config, *ctx, restart_count);
    return 0;
  } catch (const NanLossError& e) {
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
