#include "runtime/train/tensorboard/tensorboard_progress.h"

namespace paddle::tensorboard {
namespace {

// At most one file a second (a round of a small model takes milliseconds), and within 30 s
// of a step when a round is long.
constexpr auto kFlushAtBoundaries = std::chrono::seconds(1);
constexpr auto kFlushWithinEpoch = std::chrono::seconds(30);

}  // namespace

void TensorBoardProgress::step(const runtime::MetricsLine& line) {
  log_.scalar("train/loss", line.step, line.loss);
  if (line.lr) log_.scalar("train/learning_rate", line.step, *line.lr);
  log_.scalar("train/samples_per_sec", line.step, line.samples_per_sec);
  flush_after(kFlushWithinEpoch);
}

void TensorBoardProgress::flush_after(std::chrono::steady_clock::duration since_last) {
  if (std::chrono::steady_clock::now() - flushed_ < since_last) return;
  log_.flush();
  flushed_ = std::chrono::steady_clock::now();
}

void TensorBoardProgress::round_done(int64_t round, const nlohmann::json& figures) {
  for (auto it = figures.begin(); it != figures.end(); ++it)
    if (it.key().starts_with("test_") && it.value().is_number())
      log_.scalar("test/" + it.key().substr(5), round, it.value().get<double>());
  flush_after(kFlushAtBoundaries);
}

void TensorBoardProgress::tables(int64_t step, const nlohmann::json& tables) {
  for (const auto& table : tables)
    if (table.contains("table") && table["table"].is_string() && table.contains("rows") && table["rows"].is_number())
      log_.scalar("tables/" + table["table"].get<std::string>() + "/rows", step, table["rows"].get<double>());
  flush_after(kFlushAtBoundaries);
}

}  // namespace paddle::tensorboard
