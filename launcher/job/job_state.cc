#include "launcher/job/job_state.h"

#include <chrono>
#include <filesystem>

#include "common/file.h"

namespace paddle::launcher {
namespace {

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

JobState::JobState(const LaunchPlan& plan, long launcher_pid)
    : plan_(plan), launcher_pid_(launcher_pid), started_(unix_seconds()) {
  for (const ProcessSpec& spec : plan.processes) processes_.emplace_back().spec = &spec;
}

void JobState::begin_attempt(int attempt) {
  restarts_ = attempt;
  for (ProcessState& p : processes_) {
    const ProcessSpec* spec = p.spec;
    p = ProcessState();
    p.spec = spec;
  }
}

void JobState::finish(const std::string& state, int exit_status, const std::string& root_cause) {
  state_ = state;
  exit_status_ = exit_status;
  root_cause_ = root_cause;
}

nlohmann::json JobState::to_json() const {
  // Absolute: the readers run from anywhere.
  const auto absolute = [](const std::string& path) { return std::filesystem::absolute(path).lexically_normal().string(); };
  nlohmann::json processes = nlohmann::json::array();
  for (const ProcessState& p : processes_)
    processes.push_back({{"role", role_name(p.spec->role)},
                         {"rank", p.spec->rank},
                         {"local_index", p.spec->local_index},
                         {"endpoint", p.spec->endpoint},
                         {"pid", p.pid},
                         {"state", p.state},
                         {"ended", p.ended},
                         {"restarts_in_place", p.restarts_in_place},
                         {"log_file", absolute(p.spec->log_file)},
                         {"error_file", absolute(p.spec->error_file)},
                         {"metrics_file", absolute(p.spec->metrics_file)},
                         {"progress_file", p.spec->progress_page.empty() ? "" : absolute(p.spec->progress_page)},
                         {"straggler", p.straggler ? nlohmann::json(*p.straggler) : nlohmann::json()}});
  return {{"launcher_pid", launcher_pid_},
          {"mode", mode_name(plan_.mode)},
          {"node_rank", plan_.node_rank},
          {"node_count", plan_.node_count},
          {"command", plan_.command},
          {"started", started_},
          {"state", state_},
          {"exit_status", exit_status_ ? nlohmann::json(*exit_status_) : nlohmann::json()},
          {"restarts", restarts_},
          {"worker_restarts", worker_restarts_},
          {"hang", hang_},
          {"root_cause", root_cause_},
          {"processes", processes}};
}

bool JobState::save(common::Durability durability) const {
  try {
    common::write_file_atomically(std::filesystem::path(plan_.log_dir) / "job.json", to_json().dump(1) + "\n",
                                  durability);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::optional<nlohmann::json> JobState::read(const std::string& log_dir) {
  const std::optional<std::string> text = common::read_file(log_dir + "/job.json");
  if (!text) return std::nullopt;
  nlohmann::json job = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!job.is_object() || !job.contains("processes")) return std::nullopt;
  return job;
}

}  // namespace paddle::launcher
