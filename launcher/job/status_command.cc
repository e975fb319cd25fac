#include "launcher/job/status_command.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "launcher/console/log_echo.h"
#include "launcher/job/job_state.h"

namespace paddle::launcher {
namespace {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The last line of the metrics log at `path` that parses (a writer may be halfway through the
// newest); null when there is none.
nlohmann::json last_metrics(const std::string& path) {
  std::istringstream lines(last_lines(path, 2));
  nlohmann::json last;
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_object()) last = std::move(parsed);
  }
  return last;
}

bool alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

nlohmann::json read_job(const std::string& log_dir) {
  const std::string path = log_dir + "/job.json";
  if (!std::filesystem::exists(path))
    throw common::UsageError(fmt::format("status: {} not found: is {} the log_dir of a job paddle-launch ran?", path,
                                         log_dir));
  std::optional<nlohmann::json> job = JobState::read(log_dir);
  if (!job) throw common::DataError(fmt::format("status: {} is not a job state paddle-launch wrote", path));
  return *job;
}

std::string figure(const nlohmann::json& j, const char* key, const char* format) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return "-";
  return fmt::format(fmt::runtime(format), j[key].get<double>());
}

}  // namespace

std::string status_table(const nlohmann::json& job, double now) {
  std::string state = job.value("state", "?");
  const long launcher = job.value("launcher_pid", -1L);
  if (state == "running" && !alive(launcher)) state = "launcher gone";
  std::string out = fmt::format("job: {} ({}, node {} of {}), launcher pid {}, restarts {}, started {:.0f} s ago\n",
                                state, job.value("mode", "?"), job.value("node_rank", 0), job.value("node_count", 1),
                                launcher, job.value("restarts", 0), now - job.value("started", now));
  out += fmt::format("{:<12} {:<10} {:>8} {:>8} {:>12} {:>11} {:>10}  {}\n", "process", "state", "pid", "step", "loss",
                     "samples/s", "comm/step", "last line");
  for (const auto& p : job["processes"]) {
    const nlohmann::json m = last_metrics(p.value("metrics_file", ""));
    std::string process_state = p.value("state", "?");
    if (process_state == "running" && !alive(p.value("pid", -1L))) process_state = "gone";
    const std::string ago =
        m.is_object() && m.contains("time") && m["time"].is_number() ? fmt::format("{:.1f} s ago", now - m["time"].get<double>()) : "-";
    out += fmt::format("{:<12} {:<10} {:>8} {:>8} {:>12} {:>11} {:>10}  {}\n",
                       fmt::format("{} {}", p.value("role", "?"), p.value("rank", -1)), process_state,
                       p.value("pid", -1L), figure(m, "step", "{:.0f}"), figure(m, "loss", "{:.6g}"),
                       figure(m, "samples_per_sec", "{:.0f}"), figure(m, "comm_seconds_per_step", "{:.4f}"), ago);
  }
  if (const std::string cause = job.value("root_cause", ""); !cause.empty()) out += "root cause: " + cause + "\n";
  return out;
}

int run_status_command(int argc, const char* const argv[]) {
  if (argc > 3) throw common::UsageError("status: usage: paddle-launch status [LOG_DIR]");
  const std::string log_dir = argc == 3 ? argv[2] : "log";
  const bool live = ::isatty(STDOUT_FILENO) == 1;
  for (;;) {
    const nlohmann::json job = read_job(log_dir);
    const std::string table = status_table(job, unix_now());
    const bool running = job.value("state", "") == "running" && alive(job.value("launcher_pid", -1L));
    if (live) fmt::print("\x1b[H\x1b[J");  // redraw in place
    fmt::print("{}", table);
    std::fflush(stdout);
    if (!live || !running) return 0;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

}  // namespace paddle::launcher
