#include "runtime/train/training_loop.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "runtime/train/report.h"

namespace paddle::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct StepPlace {
  int64_t epoch = 0;
  int64_t batch = 0;  // in the epoch
  int64_t step = 0;   // global, counting this one
};

void log_step(LogStyle style, int64_t log_every, const StepPlace& at, double loss, const StepResult& result) {
  switch (style) {
    case LogStyle::kClassifier:
      if (at.batch % log_every != 0) return;
    {
      const TopAccuracy accuracy = result.accuracy ? result.accuracy() : TopAccuracy{};
      fmt::print("[Epoch {}, batch {}] loss: {:.5f}, acc1: {:.5f}, acc5: {:.5f}\n", at.epoch, at.batch, loss,
                 accuracy.top1, accuracy.top5);
      break;
    }
    case LogStyle::kRegression:
      if (at.step % log_every != 0) return;
      fmt::print("step {}, loss: [{:.6f}]\n", at.step, loss);
      break;
    case LogStyle::kClickRate:
      if (at.step % log_every != 0) return;
      fmt::print("TRAIN ---> pass: {} loss: {:.6f}\n", at.epoch, loss);
      break;
  }
  std::fflush(stdout);
}

void log_evaluation(LogStyle style, int64_t epoch, const Evaluation& e) {
  switch (style) {
    case LogStyle::kClassifier:
      fmt::print("[Epoch {}] test_loss: {:.5f}, test_acc1: {:.5f}, test_acc5: {:.5f}\n", epoch, e.loss, e.acc1.value_or(0),
                 e.acc5.value_or(0));
      break;
    case LogStyle::kRegression:
      fmt::print("[Epoch {}] test_loss: {:.6f}, test_rmse: {:.6f}\n", epoch, e.loss, e.rmse.value_or(0));
      break;
    case LogStyle::kClickRate:
      fmt::print("TEST ---> pass: {} auc: {:.6f} loss: {:.6f}\n", epoch, e.auc.value_or(0.5), e.loss);
      break;
  }
  std::fflush(stdout);
}

}  // namespace

nlohmann::json run_training(const TrainConfig& config, Workload& workload, RunOrigin origin,
                            Clock::time_point started, ProgressLog* metrics) {
  const bool leader = workload.worker_index() == 0;
  const LogStyle style = workload.log_style();
  CheckpointPosition position = workload.start();
  fmt::print("{}\n", workload.describe());
  RunFigures run;
  run.world_size = workload.worker_num();
  if (leader) {
    const Generation now{origin.generation, run.world_size, position};
    run.generations = record_generation(config.output_dir, now, origin.resuming);
    fmt::print("generations: {}\n", describe_generations(run.generations));
  }
  std::fflush(stdout);

  double train_seconds = 0;
  int64_t trained_samples = 0;
  Evaluation evaluation;
  bool evaluated = false, stop = false;
  // Where the last metrics line was written, for the rates of the next.
  auto line_time = Clock::now();
  int64_t line_step = position.step;
  double line_comm = workload.communication_seconds();
  const double local_batch = static_cast<double>(workload.global_batch()) / workload.worker_num();
  for (int64_t epoch = position.epoch; epoch < config.epochs && !stop; ++epoch) {
    const auto epoch_start = Clock::now();
    const int64_t epoch_first_step = position.step;
    workload.begin_epoch(epoch);
    StepPlace at{epoch, 0, position.step};
    while (auto result = workload.train_step(position.step)) {
      at.step = ++position.step;
      run.train_loss = workload.mean_over_workers(result->loss);
      if (!std::isfinite(run.train_loss)) throw NanLossError();
      log_step(style, config.log_every, at, run.train_loss, *result);
      if (metrics && at.step % config.log_every == 0) {
        const double seconds = seconds_since(line_time), comm = workload.communication_seconds();
        const auto steps = static_cast<double>(at.step - line_step);
        metrics->step({at.step, epoch, run.train_loss, workload.learning_rate(at.step - 1),
                        seconds > 0 ? steps * local_batch / seconds : 0.0, steps > 0 ? (comm - line_comm) / steps : 0.0});
        line_time = Clock::now();
        line_step = at.step;
        line_comm = comm;
      }
      ++at.batch;
      trained_samples += static_cast<int64_t>(workload.global_batch());
      if (config.max_steps > 0 && position.step >= config.max_steps) {
        stop = true;
        break;
      }
    }
    workload.end_epoch();
    const double epoch_seconds = seconds_since(epoch_start);
    train_seconds += epoch_seconds;
    if (!stop) position.epoch = epoch + 1;
    nlohmann::json figures = {
        {"epoch", epoch},
        {"train_loss", run.train_loss},
        {"seconds", epoch_seconds},
        {"samples_per_sec", epoch_seconds > 0 ? static_cast<double>(position.step - epoch_first_step) *
                                                    static_cast<double>(workload.global_batch()) / epoch_seconds
                                              : 0.0}};
    if (leader || workload.evaluates_together()) {
      evaluation = workload.evaluate();
      evaluated = true;
    }
    if (leader) {
      log_evaluation(style, epoch, evaluation);
      figures.update(evaluation_figures(evaluation));
      if (!stop && config.checkpoint) workload.save_checkpoint(position);
    }
    if (metrics) metrics->epoch(epoch, figures);
    run.history.push_back(std::move(figures));
    workload.barrier();
  }

  nlohmann::json report;
  if (!evaluated && (leader || workload.evaluates_together())) evaluation = workload.evaluate();
  if (leader) {
    workload.save_final(position);
    run.position = position;
    run.samples_per_sec = train_seconds > 0 ? static_cast<double>(trained_samples) / train_seconds : 0.0;
    run.wall_seconds = seconds_since(started);
    report = write_report(config.output_dir, workload.identity(), run, evaluation);
    fmt::print("metrics: {}\n", report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    std::fflush(stdout);
  }
  workload.barrier();
  return report;
}

}  // namespace paddle::runtime
