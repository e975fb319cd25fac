#include "launcher/dispatch/dispatch_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "common/error.h"
#include "common/job_token.h"
#include "common/parse.h"
#include "launcher/dispatch/cluster_conf.h"

namespace paddle::launcher {
namespace {

namespace fs = std::filesystem;

// Flags that the dispatcher decides for each node, or that name one machine.
constexpr const char* kDecidedPerNode[] = {"--master", "--nnodes", "--rank", "--ips", "--host",
                                           "--servers", "--workers", "--dry_run", "--agent"};

bool given(const LaunchOptions& o, std::string_view flag) {
  return std::any_of(o.given_flags.begin(), o.given_flags.end(), [&](const auto& f) { return f.first == flag; });
}

std::vector<RemoteHost> source_hosts(const DispatchOptions& d, std::optional<ClusterConf>& conf) {
  const int sources = (d.hostfile ? 1 : 0) + (d.hosts ? 1 : 0) + (d.cluster_conf ? 1 : 0);
  if (sources > 1) throw common::UsageError("give one of --hostfile, --hosts and --cluster_conf");
  if (d.hostfile) return read_hostfile(*d.hostfile);
  if (d.hosts) return parse_host_list(*d.hosts, "--hosts");
  conf = read_cluster_conf(*d.cluster_conf);
  return conf->hosts;
}

std::string job_name(const LaunchOptions& o, const std::string& directory) {
  if (o.job_id) return *o.job_id;
  std::string name = fs::path(directory).lexically_normal().filename().string();
  if (name.empty() || name == ".") name = fs::absolute(directory).lexically_normal().parent_path().filename().string();
  std::replace_if(name.begin(), name.end(), [](unsigned char c) { return !std::isalnum(c) && c != '_' && c != '-' && c != '.'; },
                  '_');
  return name.empty() ? "job" : name;
}

void check_job_id(const std::string& id) {
  if (id == "." || id == ".." || !common::is_plain_name(id))
    throw common::UsageError(fmt::format("--job_id: '{}' may hold only letters, digits, '_', '-' and '.'", id));
}

nlohmann::json agent_environment(const DispatchOptions& d, const std::optional<ClusterConf>& conf, const EnvMap& env) {
  nlohmann::json out = nlohmann::json::object();
  if (conf && !conf->ld_library_path.empty()) out["LD_LIBRARY_PATH"] = conf->ld_library_path;
  if (conf && !conf->nic.empty()) out["PADDLE_NIC"] = conf->nic;
  // Every node of the job shares one token: the one given here, else a new one.
  out["PADDLE_JOB_TOKEN"] = get_env(env, "PADDLE_JOB_TOKEN").value_or(common::JobToken::generate().secret());
  for (const std::string& item : d.env) {
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; }) ||
        std::isdigit(static_cast<unsigned char>(name.front())))
      throw common::UsageError(fmt::format("--env={}: '{}' is not a variable name", item, name));
    if (eq != std::string::npos) {
      out[name] = item.substr(eq + 1);
    } else if (auto value = get_env(env, name)) {
      out[name] = *value;
    } else {
      throw common::UsageError(fmt::format("--env={}: {} is not set here; give --env={}=VALUE", item, name, name));
    }
  }
  return out;
}

}  // namespace

std::string DispatchPlan::agent_command(size_t rank, const std::string& master_ip, const std::string& launcher) const {
  std::vector<std::string> words = {launcher, "--agent", fmt::format("--master={}:{}", master_ip, master_port),
                                    fmt::format("--nnodes={}", hosts.size()), fmt::format("--rank={}", rank),
                                    fmt::format("--job_id={}", job_id)};
  words.insert(words.end(), agent_flags.begin(), agent_flags.end());
  words.insert(words.end(), node_flags[rank].begin(), node_flags[rank].end());
  words.insert(words.end(), script_and_args.begin(), script_and_args.end());
  return fmt::format("cd {} && exec {}", shell_quote(workspace), shell_command(words));
}

std::string DispatchPlan::preflight_command() const {
  std::string lookup, tried;
  for (const auto& candidate : remote_launchers) {
    lookup += fmt::format("{}command -v {}", lookup.empty() ? "" : " || ", shell_quote(candidate));
    tried += (tried.empty() ? "" : " nor ") + candidate;
  }
  const std::string give = remote_launchers.size() > 1 ? "give --remote_launcher=PATH" : "check --remote_launcher";
  std::string check = fmt::format(
      "launcher=$({}) || {{ echo {} >&2; exit 127; }}; ", lookup,
      shell_quote(fmt::format("{}: not found on this host; {}", tried, give)));
  if (package)
    check += "command -v rsync >/dev/null 2>&1 || { echo \"rsync: not found on this host; --job_dispatch_package needs it\" >&2; exit 127; }; ";
  else
    check += fmt::format("cd {} || exit 1; ", shell_quote(workspace));
  return check + "echo \"launcher: $launcher\"; \"$launcher\" --version";
}

std::optional<std::string> launcher_found(const std::string& preflight_output) {
  std::istringstream in(preflight_output);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("launcher: ")) return line.substr(10);
  return std::nullopt;
}

std::string DispatchPlan::host_label(size_t i) const {
  const auto same_host = std::count_if(hosts.begin(), hosts.end(), [&](const RemoteHost& h) { return h.host == hosts[i].host; });
  return same_host > 1 && hosts[i].port ? fmt::format("{}_{}", hosts[i].host, *hosts[i].port) : hosts[i].host;
}

DispatchPlan make_dispatch_plan(const LaunchOptions& o, const EnvMap& env, int random_port, const std::string& own_path) {
  const DispatchOptions& d = o.dispatch;
  for (const char* flag : kDecidedPerNode)
    if (given(o, flag))
      throw common::UsageError(fmt::format("{}: a job dispatched over SSH sets it for each host from the host list; drop {}",
                                           flag, flag));
  DispatchPlan plan;
  std::optional<ClusterConf> conf;
  plan.hosts = select_hosts(source_hosts(d, conf), d.include, d.exclude);

  if (d.package && d.workspace)
    throw common::UsageError("give one of --job_dispatch_package (copy a directory to every host) and --job_workspace");
  if (!d.package && !d.workspace)
    throw common::UsageError(
        "a dispatched job needs a workspace: --job_dispatch_package=DIR copies DIR to every host, "
        "--job_workspace=DIR names one already there (a shared filesystem)");
  if (d.package) {
    if (!fs::is_directory(*d.package))
      throw common::UsageError(fmt::format("--job_dispatch_package: '{}' is not a directory", *d.package));
    plan.package = fs::absolute(*d.package).lexically_normal().string();
  }
  plan.job_id = job_name(o, d.package ? *d.package : *d.workspace);
  check_job_id(plan.job_id);
  if (d.package) {
    std::string root = d.root_dir.value_or(conf && !conf->root_dir.empty() ? conf->root_dir : "paddle-jobs");
    while (root.size() > 1 && root.ends_with('/')) root.pop_back();
    plan.workspace = root + "/" + plan.job_id;
  } else {
    plan.workspace = *d.workspace;
  }

  plan.log_dir = o.log_dir;
  plan.remote_log_dir = o.log_dir;
  if (fs::path(o.log_dir).is_relative()) plan.not_copied.push_back(fs::path(o.log_dir).lexically_normal().string());
  plan.not_copied.push_back("output");
  plan.not_copied.push_back("nodefile");
  plan.fetch_logs = d.fetch_logs;
  if (d.remote_launcher) {
    plan.remote_launchers = {*d.remote_launcher};
  } else {
    plan.remote_launchers = {"paddle-launch"};
    if (!own_path.empty()) plan.remote_launchers.push_back(own_path);
  }
  plan.ssh.options = split_ssh_options(d.ssh_opts);
  plan.ssh.connect_timeout_s = static_cast<int>(d.ssh_timeout + 0.5);
  plan.agent_env = agent_environment(d, conf, env);

  for (const auto& [flag, value] : o.given_flags)
    if (flag != "--job_id") plan.agent_flags.push_back(fmt::format("{}={}", flag, value));
  std::optional<int> start_port = o.start_port;
  if (conf && conf->port && !start_port) {
    start_port = conf->port;
    plan.agent_flags.push_back(fmt::format("--start_port={}", *conf->port));
  }
  if (d.master_port) plan.master_port = *d.master_port;
  else if (start_port && *start_port > 1) plan.master_port = *start_port - 1;
  else plan.master_port = random_port;

  const bool counts_given = given(o, "--nproc_per_node") || given(o, "--gpus") || given(o, "--devices") ||
                            given(o, "--server_num") || given(o, "--worker_num");
  for (const RemoteHost& host : plan.hosts) {
    std::vector<std::string> own;
    if (host.slots && !counts_given) own.push_back(fmt::format("--nproc_per_node={}", *host.slots));
    plan.node_flags.push_back(std::move(own));
  }
  plan.script_and_args.push_back(o.training_script);
  plan.script_and_args.insert(plan.script_and_args.end(), o.training_script_args.begin(), o.training_script_args.end());
  if (conf)
    for (const std::string& key : conf->ignored) plan.notes.push_back(fmt::format("{} has no use here; ignored", key));
  if (conf && (conf->ports_num != 1 || conf->ports_num_for_sparse != 0))
    plan.notes.push_back("PADDLE_PORTS_NUM and PADDLE_PORTS_NUM_FOR_SPARSE: each process takes one port here; ignored");
  return plan;
}

}  // namespace paddle::launcher
