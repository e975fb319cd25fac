// train: the runtime's training program, the same binary for every rank and role.
//   train [--config FILE] [--set key=value ...]      (train --help-config lists the keys)
// Reads its place in the job from the environment (paddle-launch sets it; see
// runtime/distributed/topology.h for starting it by hand) and goes through Fleet as a user's
// program would: in a collective job every process is a trainer; in a parameter-server job a
// process serves the model's tables or trains against them (train_config.h, "parallelism").
// Every worker runs the one training loop (training_loop.h): a trainer through epochs, a PS
// worker through its run's named steps (ps_run.h: epochs, or an online run's days x passes);
// worker 0 writes OUTPUT_DIR/metrics.json.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "common/crash_handlers.h"
#include "common/environment.h"
#include "common/error.h"
#include "common/error_record.h"
#include "common/heap.h"
#include "runtime/distributed/fleet.h"
#include "runtime/train/workloads/collective_workload.h"
#include "runtime/train/workloads/ctr_workload.h"
#include "runtime/train/workloads/layer_ps_workload.h"
#include "runtime/train/workloads/supervised.h"
#include "runtime/train/run/metrics_log.h"
#include "runtime/train/run/ps_run.h"
#include "runtime/train/tensorboard/tensorboard_progress.h"
#include "runtime/train/config/train_config.h"
#include "runtime/train/run/training_loop.h"

namespace paddle::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// Where this process's figures go: the launcher's metrics log (PADDLE_METRICS_FILE), and
// TensorBoard's files in output_dir/tensorboard/RUN when `run` names one and the config keeps
// tensorboard on. Not movable: `all` points into it.
struct ProgressSinks {
  std::unique_ptr<MetricsLog> metrics;
  std::unique_ptr<tensorboard::TensorBoardProgress> tensorboard;
  ProgressLogs all;

  ProgressSinks(const TrainConfig& config, const common::Environment& env, const std::string& run)
      : metrics(MetricsLog::from_environment(env)) {
    if (config.tensorboard && !run.empty())
      tensorboard = std::make_unique<tensorboard::TensorBoardProgress>(config.output_dir + "/tensorboard/" + run);
    all.add(metrics.get());
    all.add(tensorboard.get());
  }
  ProgressSinks(const ProgressSinks&) = delete;
  ProgressSinks& operator=(const ProgressSinks&) = delete;
  ProgressLog* get() { return all.empty() ? nullptr : &all; }
};

nlohmann::json tables_json(const ps::ServerMemory& memory) {
  nlohmann::json tables = nlohmann::json::array();
  for (const ps::TableMemory& t : memory.tables) {
    nlohmann::json table = {{"table", t.table}, {"rows", t.rows}, {"value_bytes", t.value_bytes}, {"index_bytes", t.index_bytes}};
    if (t.tier.tiered)
      table["tier"] = {{"memory_rows", t.tier.memory_rows},   {"disk_rows", t.tier.disk_rows},
                       {"disk_bytes", t.tier.disk_bytes},     {"hit_rate", t.tier.hit_rate},
                       {"disk_reads_per_s", t.tier.disk_reads_per_s}, {"evictions_per_s", t.tier.evictions_per_s}};
    tables.push_back(std::move(table));
  }
  return tables;
}

// A server serves its share of the model's tables until every worker stopped. With a metrics
// log, a line of its tables' memory goes there after every save and shrink and every
// kTablesEvery, for the job page (the launcher may stop a server as soon as the workers are
// done, so the lines must not wait for the end).
void serve_tables(const TrainConfig& config, Fleet& fleet, ProgressLog* metrics) {
  constexpr auto kTablesEvery = std::chrono::seconds(5);
  // Told by the settings and the data set's facts: a server builds no model and loads no data.
  const ps::TableSpecs tables =
      config.model.kind == ModelKind::kWideDeep
          ? wide_deep_tables(config)
          : LayerPsWorkload::tables_for(config, supervised_data_facts(config, fleet.environment()));
  std::mutex mutex;  // the metrics log, written from the server's threads and the reporter
  int64_t reports = 0;
  const auto report = [&](const ps::ServerMemory& memory) {
    std::lock_guard lock(mutex);
    metrics->tables(++reports, tables_json(memory));
  };
  fleet.init_server(tables, config.ps.init_dir, metrics ? std::function<void(const ps::ServerMemory&)>(report) : nullptr);
  if (!metrics) return fleet.run_server();
  std::mutex stop_mutex;
  std::condition_variable stopped;
  bool done = false;
  std::thread reporter([&] {
    std::unique_lock lock(stop_mutex);
    while (!stopped.wait_for(lock, kTablesEvery, [&] { return done; })) report(fleet.server_memory());
  });
  const auto finish = [&] {
    {
      std::lock_guard lock(stop_mutex);
      done = true;
    }
    stopped.notify_all();
    reporter.join();
  };
  try {
    fleet.run_server();
  } catch (...) {
    finish();
    throw;
  }
  finish();
  report(fleet.server_memory());
}

void run_parameter_server_role(const TrainConfig& config, const common::Environment& env, Clock::time_point started) {
  auto fleet = Fleet::init(/*is_collective=*/false, config.strategy(), env);
  if (fleet->is_server()) {
    ProgressSinks progress(config, env, fmt::format("server{}", fleet->topology().server_index));
    return serve_tables(config, *fleet, progress.get());
  }
  std::unique_ptr<PsWorkload> workload;
  if (config.model.kind == ModelKind::kWideDeep) workload = std::make_unique<CtrWorkload>(config, *fleet);
  else workload = std::make_unique<LayerPsWorkload>(config, *fleet);
  PsRun run(config, env, *fleet, *workload);
  if (run.finished_before()) return;
  run.connect();
  ProgressSinks progress(config, env, fleet->is_first_worker() ? "worker0" : "");
  run_training(config, *workload, run, run_origin(env, config.ps.start_pass > 0), started, progress.get());
  run.finish();
}

void run_trainer_role(const TrainConfig& config, const common::Environment& env, Clock::time_point started) {
  auto fleet = Fleet::init(/*is_collective=*/true, config.strategy(), env);
  const RunOrigin origin = run_origin(env, config.resume);
  fmt::print("train: rank {} of {} ({})\n", fleet->worker_index(), fleet->worker_num(), fleet->topology().style);
  CollectiveWorkload workload(config, *fleet, origin.resuming);
  ProgressSinks progress(config, env, fleet->worker_index() == 0 ? "trainer0" : "");
  run_training(config, workload, origin, started, progress.get());
}

// Parses the command line into the options `app` binds; false when it asked for --help, which
// has then been printed. Anything CLI11 refuses is a UsageError, one line like every other error.
bool parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return true;
  } catch (const CLI::Success& e) {
    app.exit(e);
    return false;
  } catch (const CLI::ParseError& e) {
    throw common::UsageError(fmt::format("{} (train --help lists the options)", e.what()));
  }
}

}  // namespace
}  // namespace paddle::runtime

int main(int argc, char** argv) {
  using namespace paddle;
  CLI::App app{"train: distributed training of the models in configs/*.json", "train"};
  std::string config_path;
  std::vector<std::string> overrides;
  app.add_option("--config", config_path, "JSON config (default: the built-in Fashion-MNIST CNN)");
  app.add_option("--set", overrides, "Override a config key: --set optimizer.lr=0.1 (repeatable)");
  bool help_config = false;
  app.add_flag("--help-config", help_config, "List every config key with its type, default, range and meaning, and exit");

  const common::Environment process_env = common::current_environment();  // once: every part reads this copy
  common::install_crash_handlers(process_env);
  common::keep_freed_memory_in_heap();
  // Whatever ends this process by an exception leaves its record for the launcher's report.
  const auto record = [&] {
    if (auto path = common::error_file_path(process_env))
      common::write_error_record(*path, common::record_exception(std::current_exception()));
  };
  try {
    if (!runtime::parse_command_line(app, argc, argv)) return 0;
    if (help_config) {
      fmt::print("{}", runtime::config_keys_help());
      return 0;
    }
    const auto started = std::chrono::steady_clock::now();
    const runtime::TrainConfig config = runtime::load_train_config(config_path, overrides);
    const runtime::JobKind job = runtime::topology_from_environment(process_env).kind;
    if (config.uses_parameter_servers(job)) runtime::run_parameter_server_role(config, process_env, started);
    else runtime::run_trainer_role(config, process_env, started);
    return 0;
  } catch (const runtime::NanLossError& e) {
    record();
    fmt::print(stderr, "{}\n", e.what());
    return e.exit_code();
  } catch (const common::ConfigError& e) {
    record();
    fmt::print(stderr, "train: config error: {}\n", e.what());
    return e.exit_code();
  } catch (const common::Error& e) {
    record();
    fmt::print(stderr, "train: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    record();
    fmt::print(stderr, "train: {}\n", e.what());
    return 1;
  }
}
