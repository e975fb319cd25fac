#include "launcher/dashboard/dashboard_server.h"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include <fstream>
#include <memory>

#include "common/error.h"
#include "common/file.h"
#include "common/listen.h"
#include "launcher/console/log_echo.h"
#include "launcher/dashboard/page.h"
#include "launcher/job/job_state.h"

namespace paddle::launcher {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kCurvePoints = 400;
constexpr long kMetricsWindow = 256 * 1024;  // the newest part of a metrics log read

// The lines of the newest kMetricsWindow of a metrics log that parse and have a step, oldest first.
std::vector<nlohmann::json> newest_lines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path, std::ios::ate);
  if (!in) return lines;
  const long size = static_cast<long>(in.tellg());
  in.seekg(std::max(0L, size - kMetricsWindow));
  std::string line;
  if (size > kMetricsWindow) std::getline(in, line);  // a line cut by the window
  while (std::getline(in, line)) {
    nlohmann::json m = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (m.is_object() && m.contains("step")) lines.push_back(std::move(m));
  }
  return lines;
}

// The last kCurvePoints lines of a metrics log, as curve points.
nlohmann::json curve(const std::string& path) {
  const std::vector<nlohmann::json> lines = newest_lines(path);
  nlohmann::json points = nlohmann::json::array();
  for (size_t i = lines.size() > kCurvePoints ? lines.size() - kCurvePoints : 0; i < lines.size(); ++i) {
    nlohmann::json point = {{"step", lines[i]["step"]}};
    for (const char* key : {"loss", "samples_per_sec", "time", "tables"})
      if (lines[i].contains(key)) point[key] = lines[i][key];
    points.push_back(std::move(point));
  }
  return points;
}

// The newest line of a metrics log: a process's last step, or a server's tables; null when none.
nlohmann::json last_line(const std::string& path) {
  std::vector<nlohmann::json> lines = newest_lines(path);
  return lines.empty() ? nlohmann::json() : std::move(lines.back());
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const DashboardServer& server) : stream_(std::move(socket)), server_(server) {}

  void read() {
    request_ = {};
    stream_.expires_after(std::chrono::seconds(30));  // a browser keeps connections open; not forever
    http::async_read(stream_, buffer_, request_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (!ec) self->respond();
    });
  }

 private:
  void respond() {
    response_ = {};
    response_.version(request_.version());
    response_.keep_alive(request_.keep_alive());
    response_.set(http::field::cache_control, "no-store");
    const std::string target(request_.target());
    if (request_.method() != http::verb::get) {
      response_.result(http::status::method_not_allowed);
    } else if (target == "/" || target == "/index.html") {
      response_.result(http::status::ok);
      response_.set(http::field::content_type, "text/html; charset=utf-8");
      response_.body() = std::string(kDashboardPage);
    } else if (target == "/api/job") {
      response_.result(http::status::ok);
      response_.set(http::field::content_type, "application/json");
      response_.body() = server_.snapshot().dump();
    } else if (target == "/metrics") {
      try {
        response_.body() = server_.metrics();
        response_.result(http::status::ok);
        response_.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      } catch (const std::exception& e) {  // a job.json or metrics line of a shape not foreseen
        response_.result(http::status::internal_server_error);
        response_.body() = fmt::format("the job's metrics: {}\n", e.what());
      }
    } else {
      response_.result(http::status::not_found);
    }
    response_.prepare_payload();
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (!ec && self->response_.keep_alive()) self->read();
    });
  }

  beast::tcp_stream stream_;
  const DashboardServer& server_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
};

}  // namespace

DashboardServer::DashboardServer(const std::string& host, int port, std::string log_dir,
                                 std::vector<std::pair<std::string, std::string>> config, std::string job_id,
                                 std::function<ControlPlaneFigures()> launcher_figures)
    : host_(host),
      log_dir_(std::move(log_dir)),
      job_id_(std::move(job_id)),
      launcher_figures_(std::move(launcher_figures)),
      acceptor_(io_) {
  for (auto& [name, value] : config) config_[name] = value;
  common::listen_on<common::UsageError, common::UsageError>(acceptor_, host, port,
                                                           asio::socket_base::max_listen_connections, "--dashboard");
  port_ = acceptor_.local_endpoint().port();
  accept();
  thread_.start("job-page", [this](std::stop_token) { io_.run(); }, [this] { io_.stop(); });
}

DashboardServer::~DashboardServer() { thread_.stop(); }

std::string DashboardServer::url() const { return fmt::format("http://{}:{}/", host_, port_); }

nlohmann::json DashboardServer::snapshot() const {
  const nlohmann::json job = JobState::read(log_dir_).value_or(nullptr);  // null until the launcher writes it
  nlohmann::json processes = nlohmann::json::array();
  if (!job.is_null())
    for (nlohmann::json p : job["processes"]) {
      p["metrics"] = curve(p.value("metrics_file", ""));
      p["log_tail"] = last_lines(p.value("log_file", ""), 15);
      processes.push_back(std::move(p));
    }
  return {{"config", config_}, {"endpoints", common::read_file(log_dir_ + "/endpoints.log").value_or("")}, {"job", job},
          {"processes", processes}};
}

std::string DashboardServer::metrics() const {
  const nlohmann::json job = JobState::read(log_dir_).value_or(nullptr);
  std::vector<nlohmann::json> lines;
  std::vector<std::optional<common::ProgressReading>> pages;
  if (!job.is_null())
    for (const nlohmann::json& p : job["processes"]) {
      lines.push_back(last_line(p.value("metrics_file", "")));
      const std::string page = p.value("progress_file", "");
      pages.push_back(page.empty() ? std::nullopt : common::read_progress_page(page));
    }
  return job_metrics(job_id_, job, lines, launcher_figures_ ? launcher_figures_() : ControlPlaneFigures{}, pages,
                     common::monotonic_ns());
}

void DashboardServer::accept() {
  acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) std::make_shared<Session>(std::move(socket), *this)->read();
    accept();
  });
}

}  // namespace paddle::launcher
