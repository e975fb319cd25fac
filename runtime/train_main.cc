// train: the runtime's training program, the same binary for every rank.
//   train [--config FILE] [--set key=value ...]
// Reads its place in the job from the environment (paddle-launch sets it; see topology.h for
// starting it by hand), trains the configured model and writes OUTPUT_DIR/metrics.json.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>

#include "checkpoint.h"
#include "dataset.h"
#include "distributed_context.h"
#include "train_config.h"
#include "trainer.h"

using namespace paddle::runtime;

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
    auto ctx = DistributedContext::from_environment(env);
    const int restart_count = env.count("PADDLE_RESTART_COUNT") ? std::atoi(env.at("PADDLE_RESTART_COUNT").c_str()) : 0;
    fmt::print("train: rank {} of {} ({})\n", ctx->rank(), ctx->world(), ctx->topology().style);
    train(config, *ctx, restart_count);
    return 0;
  } catch (const NanLossError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 3;
  } catch (const ConfigError& e) {
    fmt::print(stderr, "train: config error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "train: {}\n", e.what());
    return 1;
  }
}
