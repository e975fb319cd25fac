#include "runtime/train/run/metrics_log.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace paddle::runtime {

MetricsLog::MetricsLog(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "ae")) {
  if (file_ == nullptr)
    throw common::DataError(fmt::format("{}: cannot open the metrics log (PADDLE_METRICS_FILE): {}", path,
                                        std::strerror(errno)));
}

MetricsLog::~MetricsLog() { std::fclose(file_); }

std::unique_ptr<MetricsLog> MetricsLog::from_environment(const common::Environment& env) {
  const auto path = common::get_env(env, "PADDLE_METRICS_FILE");
  if (!path || path->empty()) return nullptr;
  return std::make_unique<MetricsLog>(*path);
}

void MetricsLog::write(const MetricsLine& line) {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const nlohmann::json j = {{"time", now},
                            {"step", line.step},
                            {"epoch", line.round},
                            {"loss", line.loss},
                            {"lr", line.lr ? nlohmann::json(*line.lr) : nlohmann::json()},
                            {"samples_per_sec", line.samples_per_sec},
                            {"comm_seconds_per_step", line.comm_seconds_per_step}};
  append(j);
}

void MetricsLog::write_tables(int64_t step, const nlohmann::json& tables) {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  append({{"time", now}, {"step", step}, {"tables", tables}});
}

void MetricsLog::append(const nlohmann::json& line) {
  const std::string text = line.dump() + "\n";
  std::fwrite(text.data(), 1, text.size(), file_);
  std::fflush(file_);
}

}  // namespace paddle::runtime
