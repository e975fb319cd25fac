#pragma once
// DashboardServer: the job page of --dashboard, served with Boost.Beast from a thread of its own
// on loopback. It reads what the launcher and the processes already write, so it needs nothing
// from the supervisor: LOG_DIR/job.json (job_state.h), each process's metrics log
// (runtime/train/run/metrics_log.h), the last lines of its log, and endpoints.log.
//
//   GET /          the page (page.html, embedded in the binary; it draws its own SVG curves and
//                  polls /api/job every second, nothing is fetched from elsewhere)
//   GET /api/job   {"config": {NAME: VALUE, ...}, "endpoints": "...", "job": job.json or null,
//                   "processes": [{...job.json's process, "metrics": [{"step", "loss",
//                   "samples_per_sec", "time"}, ...the last 400], "log_tail": "..."}]}
//   GET /metrics   the same job for Prometheus, in its text format (job_metrics.h)

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <nlohmann/json.hpp>

#include "common/background_thread.h"
#include "launcher/dashboard/job_metrics.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace paddle::launcher {

class DashboardServer {
 public:
  // Binds host:port (0: any free port) at once; common::UsageError naming --dashboard when it
  // can't. `config` is the Configuration Arguments block's rows; `launcher_figures` is asked
  // at each GET /metrics, from the server's thread.
  DashboardServer(const std::string& host, int port, std::string log_dir,
                  std::vector<std::pair<std::string, std::string>> config, std::string job_id = "default",
                  std::function<ControlPlaneFigures()> launcher_figures = {});
  ~DashboardServer();
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;

  std::string url() const;
  // What GET /api/job answers now.
  nlohmann::json snapshot() const;
  // What GET /metrics answers now.
  std::string metrics() const;

 private:
  void accept();

  std::string host_;
  std::string log_dir_;
  nlohmann::json config_;
  std::string job_id_;
  std::function<ControlPlaneFigures()> launcher_figures_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  int port_ = 0;
  common::BackgroundThread thread_;
};

}  // namespace paddle::launcher
