#pragma once
// LOG_DIR/<job_id>.gpu.log: nvidia-smi's view of this node's GPUs while the job runs, as Paddle's
// launcher's watcher writes it (--enable_gpu_log, on by default): the devices once, then every
// 5 s each GPU's utilisation and memory, one CSV line per GPU. Where nvidia-smi is not on PATH
// the file says so once. A query that hangs (a GPU gone bad) is killed after 10 s, so stopping
// the log never waits on it.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "common/background_thread.h"
#include "launcher/plan/environment.h"

namespace paddle::launcher {

class GpuLog {
 public:
  GpuLog(std::string path, EnvMap env, std::chrono::milliseconds interval = std::chrono::seconds(5));
  ~GpuLog();
  GpuLog(const GpuLog&) = delete;
  GpuLog& operator=(const GpuLog&) = delete;

  const std::string& path() const { return path_; }

 private:
  void run(const std::stop_token& stop);
  // Runs nvidia-smi with `args`, its output appended to the log; false when it cannot start.
  bool query(const std::string& program, const std::vector<std::string>& args, const std::stop_token& stop);

  std::string path_;
  EnvMap env_;
  std::chrono::milliseconds interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  common::BackgroundThread thread_;
};

}  // namespace paddle::launcher
