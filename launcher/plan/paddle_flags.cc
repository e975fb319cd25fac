#include "launcher/plan/paddle_flags.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "launcher/plan/launch_options.h"

namespace paddle::launcher {
namespace {

using common::UsageError;

constexpr const char* kPaddleGroup = "Paddle's launchers' flags (each also read from its PADDLE_* twin)";

// env_args_mapping of Paddle 3.3.1 (a superset of 2.6.2's), in its order; then the legacy
// launcher's elastic variables, and ours.
constexpr std::array kTwins = {
    FlagTwin{"POD_IP", "--host", true},
    FlagTwin{"PADDLE_MASTER", "--master", true},
    FlagTwin{"PADDLE_DEVICES", "--devices"},
    FlagTwin{"PADDLE_NNODES", "--nnodes", true},
    FlagTwin{"PADDLE_RUN_MODE", "--run_mode"},
    FlagTwin{"PADDLE_LOG_LEVEL", "--log_level"},
    FlagTwin{"PADDLE_LOG_OVERWRITE", "--log_overwrite"},
    FlagTwin{"PADDLE_SORT_IP", "--sort_ip"},
    FlagTwin{"PADDLE_NPROC_PER_NODE", "--nproc_per_node"},
    FlagTwin{"PADDLE_JOB_ID", "--job_id", true},
    FlagTwin{"PADDLE_RANK", "--rank", true},
    FlagTwin{"PADDLE_LOG_DIR", "--log_dir"},
    FlagTwin{"PADDLE_MAX_RESTART", "--max_restart"},
    FlagTwin{"PADDLE_ELASTIC_LEVEL", "--elastic_level"},
    FlagTwin{"PADDLE_ELASTIC_TIMEOUT", "--elastic_timeout"},
    FlagTwin{"PADDLE_SERVER_NUM", "--server_num"},
    FlagTwin{"PADDLE_TRAINER_NUM", "--trainer_num"},
    FlagTwin{"PADDLE_SERVERS_ENDPOINTS", "--servers"},
    FlagTwin{"PADDLE_TRAINERS_ENDPOINTS", "--trainers"},
    FlagTwin{"PADDLE_GLOO_PORT", "--gloo_port"},
    FlagTwin{"PADDLE_WITH_GLOO", "--with_gloo"},
    FlagTwin{"PADDLE_START_PORT", "--start_port"},
    FlagTwin{"PADDLE_IPS", "--ips"},
    FlagTwin{"PADDLE_AUTO_PARALLEL_CONFIG", "--auto_parallel_config"},
    FlagTwin{"PADDLE_AUTO_CLUSTER", "--auto_cluster_config"},
    FlagTwin{"PADDLE_ELASTIC_SERVER", "--elastic_server"},
    FlagTwin{"PADDLE_ELASTIC_NP", "--np"},
    FlagTwin{"PADDLE_ELASTIC_SCALE", "--scale"},
    FlagTwin{"PADDLE_ELASTIC_FORCE", "--force"},
    FlagTwin{"PADDLE_PS_WORKER_RESTARTS", "--ps_worker_restarts"},
    FlagTwin{"PADDLE_HANG_TIMEOUT", "--hang_timeout"},
    FlagTwin{"PADDLE_ON_HANG", "--on_hang"},
    FlagTwin{"PADDLE_STRAGGLER_FACTOR", "--straggler_factor"},
};

// Names of one setting.
constexpr std::array<std::array<std::string_view, 5>, 8> kSameSetting = {{
    {"--devices", "--gpus", "--xpus", "--npus", "--selected_gpus"},
    {"--selected_xpus", "--xpus", "--devices", "--gpus", "--npus"},
    {"--trainers", "--workers"},
    {"--trainer_num", "--worker_num"},
    {"--gloo_port", "--http_port"},
    {"--max_restart", "--max_restarts"},
    {"--elastic_server", "--master"},
    {"--np", "--nnodes"},
}};

// fleet.launch's flags that python -m paddle.distributed.launch does not know: given without a
// master, Paddle hands the job to the legacy launcher (Context.is_legacy_mode).
constexpr std::array kLegacyOnly = {"--backend",       "--workers",         "--worker_num",       "--http_port",
                                    "--heter_worker_num", "--heter_workers", "--heter_devices",    "--selected_gpus",
                                    "--selected_xpus", "--elastic_server",  "--elastic_pre_hook", "--scale",
                                    "--force",         "--np"};

CLI::Validator paddle_bool_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return paddle_bool(text) ? "" : fmt::format("'{}' is not a boolean (True/False, 1/0, yes/no, on/off)", text);
      },
      "BOOL", "BOOL");
}

bool as_bool(const std::optional<std::string>& text, bool otherwise) { return text ? *paddle_bool(*text) : otherwise; }

// Two names of one setting given different values.
template <typename T>
void merge(std::optional<T>& into, const std::optional<T>& alias, std::string_view into_flag, std::string_view alias_flag) {
  if (!alias) return;
  if (into && *into != *alias)
    throw UsageError(fmt::format("{}={} and {}={} name the same setting; give one", alias_flag, *alias, into_flag, *into));
  into = alias;
}

[[noreturn]] void refuse(std::string_view flag, std::string_view feature, std::string_view instead) {
  throw UsageError(fmt::format("{}: {} is not built into paddle-launch; {}", flag, feature, instead));
}

void refuse_unbuilt(const PaddleFlagValues& v) {
  if (v.auto_tuner_json)
    refuse("--auto_tuner_json", "Paddle's auto-tuner (its search over trial runs)",
           "run the search with python -m paddle.distributed.launch --auto_tuner_json, then launch its best "
           "configuration with paddle-launch");
  for (const auto& [value, flag] : {std::pair{&v.coordinator_num, "--coordinator_num"}, {&v.coordinators, "--coordinators"}})
    if (*value)
      refuse(flag, "a parameter-server job's coordinators (TRAINING_ROLE=COORDINATOR, federated learning)",
             "run such a job with python -m paddle.distributed.fleet.launch");
  for (const auto& [value, flag] : {std::pair{&v.enable_auto_mapping, "--enable_auto_mapping"},
                                    {&v.rank_mapping_path, "--rank_mapping_path"},
                                    {&v.cluster_topo_path, "--cluster_topo_path"}})
    if (*value)
      refuse(flag, "auto-parallel rank mapping (a pre-launch per machine, then ranks placed by the mapping)",
             "place ranks with --rank on each node, or run it with python -m paddle.distributed.fleet.launch");
}

// The devices' kind, from the flag that named them.
void merge_devices(LaunchOptions& o, const PaddleFlagValues& v) {
  merge(o.gpus, v.selected_gpus, "--gpus", "--selected_gpus");
  std::optional<std::string> xpus = v.xpus;
  merge(xpus, v.selected_xpus, "--xpus", "--selected_xpus");
  const std::pair<const std::optional<std::string>*, DeviceKind> kinds[] = {{&xpus, DeviceKind::kXpu},
                                                                            {&v.npus, DeviceKind::kNpu}};
  for (const auto& [ids, kind] : kinds) {
    if (!*ids) continue;
    const char* flag = kind == DeviceKind::kXpu ? "--xpus" : "--npus";
    if (o.gpus && o.device_kind == DeviceKind::kGpu)
      throw UsageError(fmt::format("{}={} and --gpus/--devices={} both name this node's devices; give one", flag, **ids, *o.gpus));
    if (o.gpus) throw UsageError(fmt::format("--xpus and --npus both name this node's devices; give one"));
    o.gpus = *ids;
    o.device_kind = kind;
  }
}

void check_auto_parallel_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("--auto_parallel_config: cannot read '{}'", path));
  const nlohmann::json config = nlohmann::json::parse(in, nullptr, false);
  if (!config.is_object())
    throw UsageError(fmt::format("--auto_parallel_config: '{}' is not a JSON object", path));
  const auto mode = config.find("tuner_run_mode");
  const std::string run_mode = mode == config.end() || !mode->is_string() ? "tuner_and_run" : mode->get<std::string>();
  if (run_mode == "tuner_only" || run_mode == "tuner_and_run")
    refuse("--auto_parallel_config", fmt::format("the auto-parallel tuner's pre-run (tuner_run_mode {} in {})", run_mode, path),
           "set \"tuner_run_mode\": \"run\" to pass the tuned configuration to the trainers");
}

// Paddle's restart policy: --elastic_level >= 1 restarts the job, --max_restart times.
void apply_elastic_level(LaunchOptions& o, const std::function<bool(std::string_view)>& given) {
  if (!given("--elastic_level")) return;
  const bool restarts = o.elastic_level >= 1;
  if (restarts && !given("--max_restart") && !given("--max_restarts")) o.max_restarts = 3;  // Paddle's default
  if (!restarts && (given("--max_restart") || given("--max_restarts")) && o.max_restarts > 0)
    throw UsageError(fmt::format("--elastic_level={} stops the job at a failure, but --max_restart={} asks for restarts; "
                                 "use --elastic_level=1 to restart",
                                 o.elastic_level, o.max_restarts));
  if (!given("--grace_period")) o.grace_period = restarts ? 30.0 : 3.0;  // Paddle's pod.stop timeouts
}

void apply_legacy_rule(LaunchOptions& o, const PaddleFlagValues& v, const std::function<bool(std::string_view)>& given,
                       const EnvMap& env) {
  if (v.legacy) {
    o.legacy = *paddle_bool(*v.legacy);
    if (o.legacy) o.legacy_reason = "--legacy";
    return;
  }
  if (o.master || get_env(env, "PADDLE_MASTER").value_or("") != "") return;
  for (const char* flag : kLegacyOnly)
    if (given(flag)) {
      o.legacy = true;
      o.legacy_reason = fmt::format("{}, a flag of paddle.distributed.fleet.launch only, without a master", flag);
      return;
    }
}

}  // namespace

std::optional<bool> paddle_bool(std::string_view text) {
  std::string lower(text);
  std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* yes : {"y", "yes", "t", "true", "on", "1"})
    if (lower == yes) return true;
  for (const char* no : {"n", "no", "f", "false", "off", "0"})
    if (lower == no) return false;
  return std::nullopt;
}

std::span<const FlagTwin> flag_twins() { return kTwins; }

std::vector<std::string_view> same_setting(std::string_view flag) {
  for (const auto& names : kSameSetting)
    if (std::ranges::find(names, flag) != names.end()) {
      std::vector<std::string_view> out;
      for (auto name : names)
        if (!name.empty()) out.push_back(name);
      return out;
    }
  return {flag};
}

void add_paddle_flags(CLI::App& app, LaunchOptions& o, PaddleFlagValues& v) {
  const auto port = CLI::Range(1, 65535);
  const CLI::Validator boolean = paddle_bool_validator();
  const auto add = [&](const std::string& name, auto& target, const std::string& help) {
    return app.add_option(name, target, help)->group(kPaddleGroup);
  };
  add("--log_level", o.log_level, "The launcher's console lines at this level and above: DEBUG, INFO, WARNING, ERROR")
      ->transform(CLI::IsMember({"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}, CLI::ignore_case))
      ->capture_default_str();
  add("--log_overwrite", v.log_overwrite,
      "True (default here): each run starts its logs afresh; False (Paddle's default): they go on after the last run's")
      ->check(boolean);
  add("--sort_ip", v.sort_ip, "Rank the nodes by IP address alone (every node must say the same)")->check(boolean);
  add("--max_restart", v.max_restart, "--max_restarts by Paddle's name")->check(CLI::Range(0, 1000));
  add("--elastic_level", o.elastic_level,
      "-1 or 0: a failure stops the job (3 s grace); 1: the job restarts, --max_restart times (default 3; 30 s grace)")
      ->check(CLI::Range(-1, 100));
  add("--enable_gpu_log", v.enable_gpu_log, "On GPUs, write LOG_DIR/<job_id>.gpu.log from nvidia-smi every 5 s (default True)")
      ->check(boolean);
  add("--legacy", v.legacy,
      "Give the processes paddle.distributed.fleet.launch's variables, without Paddle 3's additions")
      ->check(boolean);
  add("--xpus", v.xpus, "Kunlun XPU ids, relative to XPU_VISIBLE_DEVICES; one process per id");
  add("--selected_xpus", v.selected_xpus, "--xpus by fleet.launch's name");
  add("--npus", v.npus, "Ascend NPU ids, relative to NPU_VISIBLE_DEVICES; one process per id");
  add("--selected_gpus", v.selected_gpus, "--gpus by fleet.launch's name");
  add("--with_gloo", o.with_gloo, "PADDLE_WITH_GLOO for every process: 0, 1 or 2")->check(CLI::IsMember({"0", "1", "2"}));
  add("--gloo_port", v.gloo_port, "--http_port by Paddle's name: the PS job's Gloo store")->check(port);
  add("--trainers", v.trainers, "--workers by Paddle's name");
  add("--trainer_num", v.trainer_num, "--worker_num by Paddle's name")->check(CLI::Range(0, 4096));
  add("--auto_parallel_config", o.auto_parallel_config,
      "A tuned auto-parallel configuration (JSON) for the trainers: PADDLE_AUTO_PARALLEL_CONFIG");
  add("--auto_cluster_config", v.auto_cluster_config, "PADDLE_AUTO_CLUSTER for the trainers (default 0)")->check(boolean);
  add("--auto_tuner_json", v.auto_tuner_json, "Paddle's auto-tuner: refused (not built here)");
  add("--elastic_server", v.elastic_server, "fleet.launch's elastic etcd, HOST:PORT: --master=etcd://HOST:PORT");
  add("--np", v.np, "fleet.launch's elastic node count, N or MIN:MAX: --nnodes");
  add("--scale", v.scale, "Accepted with a warning: Paddle reads it and uses it nowhere");
  add("--force", v.force, "Accepted with a warning: Paddle reads it and uses it nowhere");
  add("--elastic_pre_hook", o.elastic_pre_hook, "A shell command run before each start of this node's processes");
  add("--coordinator_num", v.coordinator_num, "PS coordinators: refused (not built here)");
  add("--coordinators", v.coordinators, "PS coordinators: refused (not built here)");
  add("--enable_auto_mapping", v.enable_auto_mapping, "Auto-parallel rank mapping: refused (not built here)");
  add("--rank_mapping_path", v.rank_mapping_path, "Auto-parallel rank mapping: refused (not built here)");
  add("--cluster_topo_path", v.cluster_topo_path, "Auto-parallel rank mapping: refused (not built here)");
}

void finish_paddle_flags(LaunchOptions& o, const PaddleFlagValues& v, const std::function<bool(std::string_view)>& given,
                         const EnvMap& env) {
  refuse_unbuilt(v);
  std::ranges::transform(o.log_level, o.log_level.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  o.log_overwrite = as_bool(v.log_overwrite, true);
  o.sort_ip = as_bool(v.sort_ip, false);
  o.enable_gpu_log = as_bool(v.enable_gpu_log, true);
  o.auto_cluster_config = as_bool(v.auto_cluster_config, false);
  if (o.sort_ip && o.node_rank)
    throw UsageError(fmt::format("--sort_ip ranks the nodes by IP address, and --rank={} gives this node's rank; give one",
                                 *o.node_rank));

  merge_devices(o, v);
  merge(o.workers, v.trainers, "--workers", "--trainers");
  merge(o.worker_num, v.trainer_num, "--worker_num", "--trainer_num");
  merge(o.http_port, v.gloo_port, "--http_port", "--gloo_port");
  if (v.max_restart) {
    if (given("--max_restarts") && o.max_restarts != *v.max_restart)
      throw UsageError(fmt::format("--max_restart={} and --max_restarts={} name the same setting; give one", *v.max_restart,
                                   o.max_restarts));
    o.max_restarts = *v.max_restart;
  }
  if (v.elastic_server) {
    const std::string etcd = v.elastic_server->starts_with("etcd://") ? *v.elastic_server : "etcd://" + *v.elastic_server;
    merge(o.master, std::optional<std::string>(etcd), "--master", "--elastic_server");
  }
  merge(o.nnodes, v.np, "--nnodes", "--np");
  for (const auto& [value, flag] : {std::pair{&v.scale, "--scale"}, {&v.force, "--force"}})
    if (*value)
      o.notices.push_back(fmt::format("{}={} has no effect: Paddle's elastic launcher reads it and uses it nowhere", flag, **value));
  if (o.auto_parallel_config) {
    check_auto_parallel_config(*o.auto_parallel_config);
    o.auto_parallel_config = std::filesystem::absolute(*o.auto_parallel_config).lexically_normal().string();
  }
  apply_elastic_level(o, given);
  apply_legacy_rule(o, v, given, env);
}

}  // namespace paddle::launcher
