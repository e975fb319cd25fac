#include "runtime/train/run/report.h"

#include <filesystem>

#include "common/file.h"

namespace paddle::runtime {
namespace {

nlohmann::json or_null(const std::optional<double>& value) { return value ? nlohmann::json(*value) : nlohmann::json(); }

}  // namespace

Evaluation evaluation_from_figures(const nlohmann::json& figures) {
  Evaluation e;
  const auto number = [&](const char* name) {
    return figures.contains(name) && figures[name].is_number() ? std::optional<double>(figures[name].get<double>())
                                                               : std::nullopt;
  };
  e.loss = number("test_loss").value_or(0);
  e.acc1 = number("test_acc");
  e.acc5 = number("test_acc5");
  e.rmse = number("test_rmse");
  e.auc = number("test_auc");
  e.samples = number("test_samples");
  return e;
}

nlohmann::json evaluation_figures(const Evaluation& evaluation) {
  nlohmann::json figures = {{"test_loss", evaluation.loss}};
  const std::pair<const char*, const std::optional<double>*> named[] = {
      {"test_acc", &evaluation.acc1}, {"test_acc5", &evaluation.acc5}, {"test_rmse", &evaluation.rmse},
      {"test_auc", &evaluation.auc}, {"test_samples", &evaluation.samples}};
  for (const auto& [name, value] : named)
    if (*value) figures[name] = **value;
  return figures;
}

nlohmann::json write_report(const std::string& output_dir, const nlohmann::json& identity, const RunFigures& run,
                            const Evaluation& evaluation) {
  nlohmann::json report = identity;
  report["world_size"] = run.world_size;
  report["epochs"] = run.position.rounds;
  report["steps"] = run.position.step;
  report["generations"] = generations_to_json(run.generations);
  report["train_loss"] = run.train_loss;
  report["test_loss"] = evaluation.loss;
  report["test_acc"] = or_null(evaluation.acc1);
  report["test_acc5"] = or_null(evaluation.acc5);
  report["test_rmse"] = or_null(evaluation.rmse);
  report["baseline_rmse"] = or_null(evaluation.baseline_rmse);
  report["test_auc"] = or_null(evaluation.auc);
  report["test_samples"] = or_null(evaluation.samples);
  report["samples_per_sec"] = run.samples_per_sec;
  report["wall_seconds"] = run.wall_seconds;
  report["history"] = run.history;
  // replace: a path from --set may be any bytes, not UTF-8
  const std::string text = report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  common::write_file_atomically(std::filesystem::path(output_dir) / "metrics.json", text + "\n");
  return report;
}

}  // namespace paddle::runtime
