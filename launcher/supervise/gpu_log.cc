#include "launcher/supervise/gpu_log.h"

#include <boost/asio/io_context.hpp>

#include <csignal>
#include <fstream>
#include <optional>

#include "launcher/plan/training_command.h"
#include "launcher/supervise/child_process.h"

namespace paddle::launcher {
namespace {

constexpr auto kQueryTimeout = std::chrono::seconds(10);

}  // namespace

GpuLog::GpuLog(std::string path, EnvMap env, std::chrono::milliseconds interval)
    : path_(std::move(path)), env_(std::move(env)), interval_(interval) {
  thread_.start("gpu-log", [this](std::stop_token stop) { run(stop); }, [this] {
    std::lock_guard lock(mutex_);
    wake_.notify_all();
  });
}

GpuLog::~GpuLog() { thread_.stop(); }

bool GpuLog::query(const std::string& program, const std::vector<std::string>& args, const std::stop_token& stop) {
  boost::asio::io_context io;
  std::optional<int> status;
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), args.begin(), args.end());
  try {
    ChildProcess child(io, argv, env_, path_, [&status](int s) { status = s; }, ChildProcess::Stdin::kNull, -1,
                       ChildProcess::Log::kAppend);
    const auto deadline = std::chrono::steady_clock::now() + kQueryTimeout;
    while (!status && !stop.stop_requested() && std::chrono::steady_clock::now() < deadline) {
      io.run_for(std::chrono::milliseconds(100));
      io.restart();
    }
    if (!status) {
      child.signal_group(SIGKILL);
      io.run_for(std::chrono::seconds(1));
    }
  } catch (const std::exception& e) {
    std::ofstream(path_, std::ios::app) << "paddle-launch: cannot run " << program << ": " << e.what() << "\n";
    return false;
  }
  return true;
}

void GpuLog::run(const std::stop_token& stop) {
  const auto program = search_path("nvidia-smi", env_);
  if (!program) {
    std::ofstream(path_, std::ios::app) << "paddle-launch: nvidia-smi is not on PATH: no GPU figures\n";
    return;
  }
  if (!query(program->string(), {"-L"}, stop)) return;
  while (!stop.stop_requested()) {
    if (!query(program->string(),
               {"--query-gpu=timestamp,index,utilization.gpu,utilization.memory,memory.used,memory.total",
                "--format=csv,noheader"},
               stop))
      return;
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, interval_, [&] { return stop.stop_requested(); });
  }
}

}  // namespace paddle::launcher
