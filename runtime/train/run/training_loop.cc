#include "runtime/train/run/training_loop.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "runtime/train/run/report.h"
#include "runtime/train/run/straggler_window.h"

namespace paddle::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using common::Phase;
using Scope = common::ProgressPage::Scope;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct StepPlace {
  const Round& round;
  int64_t batch = 0;  // in the round
  int64_t step = 0;   // global, counting this one
};

void log_step(LogStyle style, int64_t log_every, const StepPlace& at, double loss, const StepResult& result) {
  switch (style) {
    case LogStyle::kClassifier:
      if (at.batch % log_every != 0) return;
    {
      const TopAccuracy accuracy = result.accuracy ? result.accuracy() : TopAccuracy{};
      fmt::print("[Epoch {}, batch {}] loss: {:.5f}, acc1: {:.5f}, acc5: {:.5f}\n", at.round.index, at.batch, loss,
                 accuracy.top1, accuracy.top5);
      break;
    }
    case LogStyle::kRegression:
      if (at.step % log_every != 0) return;
      fmt::print("step {}, loss: [{:.6f}]\n", at.step, loss);
      break;
    case LogStyle::kClickRate:
      if (at.step % log_every != 0) return;
      fmt::print("TRAIN ---> {} loss: {:.6f}\n", at.round.name, loss);
      break;
  }
  std::fflush(stdout);
}

void log_evaluation(LogStyle style, const Round& round, const Evaluation& e) {
  switch (style) {
    case LogStyle::kClassifier:
      fmt::print("[Epoch {}] test_loss: {:.5f}, test_acc1: {:.5f}, test_acc5: {:.5f}\n", round.index, e.loss,
                 e.acc1.value_or(0), e.acc5.value_or(0));
      break;
    case LogStyle::kRegression:
      fmt::print("[Epoch {}] test_loss: {:.6f}, test_rmse: {:.6f}\n", round.index, e.loss, e.rmse.value_or(0));
      break;
    case LogStyle::kClickRate:
      fmt::print("TEST ---> {} auc: {:.6f} loss: {:.6f}{}\n", round.name, e.auc.value_or(0.5), e.loss,
                 e.samples ? fmt::format(" samples: {:.0f}", *e.samples) : "");
      break;
  }
  std::fflush(stdout);
}

}  // namespace

nlohmann::json run_training(const TrainConfig& config, Workload& workload, Schedule& schedule, RunOrigin origin,
                            Clock::time_point started, ProgressLog* metrics) {
  const bool leader = workload.worker_index() == 0;
  const LogStyle style = workload.log_style();
  CheckpointPosition position = schedule.start();
  const std::optional<WorkerMark> resume = workload.resume_at();
  if (resume) {
    position.epoch = resume->pass;
    position.step = resume->step;
  }
  fmt::print("{}\n", workload.describe());
  RunFigures run;
  run.world_size = workload.worker_num();
  if (position.history.is_array()) {  // a resumed run goes on with the figures of the rounds it resumed after
    run.history = std::move(position.history);
    if (!run.history.empty() && run.history.back().is_object() && run.history.back().contains("train_loss") &&
        run.history.back()["train_loss"].is_number())
      run.train_loss = run.history.back()["train_loss"].get<double>();
  }
  position.history = nlohmann::json();
  if (leader) {
    const Generation now{origin.generation, run.world_size, position};
    const bool resuming = origin.resuming || position.epoch > 0 || position.step > 0;
    run.generations = record_generation(config.output_dir, now, resuming);
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
  common::ProgressPage& page = workload.progress();
  const TestFault& fault = workload.test_fault();
  StragglerWindow straggler(workload.straggler_factor(), workload.worker_index(), page,
                            [&workload](float busy) { return workload.gather_over_workers(busy); });
  size_t choices_printed = 0;  // the kernels chosen at their shapes' first use, each said once
  bool first_step_done = false;
  const auto print_kernel_choices = [&] {
    const std::vector<std::string> choices = workload.kernel_choices();
    for (; choices_printed < choices.size(); ++choices_printed) fmt::print("kernel: {}\n", choices[choices_printed]);
    std::fflush(stdout);
  };
  for (auto r = static_cast<size_t>(std::max<int64_t>(position.epoch, 0)); r < schedule.round_count() && !stop; ++r) {
    const Round round = schedule.round(r);
    schedule.before_round(round);
    const auto round_start = Clock::now();
    const int64_t round_first_step = position.step;
    workload.begin_epoch(round.index);
    StepPlace at{round, 0, position.step};
    if (resume && static_cast<int64_t>(r) == resume->pass) {
      workload.skip_batches(resume->batch);
      at.batch = resume->batch;
    }
    const auto pass = static_cast<int64_t>(r);
    workload.mark_progress(pass, at.batch, position.step, false);
    page.enter(Phase::kCompute);
    page.begin_steps();
    while (auto result = workload.train_step(position.step)) {
      at.step = ++position.step;
      if (!first_step_done) print_kernel_choices();  // the training step's shapes
      first_step_done = true;
      workload.mark_progress(pass, at.batch + 1, position.step, false);
      run.train_loss = workload.mean_over_workers(result->loss);
      page.step_done();
      straggler.step_done(at.step);
      if (!std::isfinite(run.train_loss)) throw NanLossError();
      log_step(style, config.log_every, at, run.train_loss, *result);
      if (metrics && at.step % config.log_every == 0) {
        const double seconds = seconds_since(line_time), comm = workload.communication_seconds();
        const auto steps = static_cast<double>(at.step - line_step);
        metrics->step({at.step, round.index, run.train_loss, workload.learning_rate(at.step - 1),
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
    // Before the pass's end (a shrink's barriers, an evaluation's), and after it, with all acknowledged.
    workload.mark_progress(pass, at.batch, position.step, true);
    workload.end_epoch();
    workload.mark_progress(pass, at.batch, position.step, true);
    const double round_seconds = seconds_since(round_start);
    train_seconds += round_seconds;
    if (!stop) position.epoch = static_cast<int64_t>(r) + 1;
    nlohmann::json figures = {
        {"epoch", round.index},
        {"train_loss", run.train_loss},
        {"seconds", round_seconds},
        {"samples_per_sec", round_seconds > 0 ? static_cast<double>(position.step - round_first_step) *
                                                    static_cast<double>(workload.global_batch()) / round_seconds
                                              : 0.0}};
    figures.update(round.labels);
    if (leader || workload.evaluates_together()) {
      Scope evaluating(page, Phase::kEvaluation);
      fault.in_slow_phase(page.steps());
      evaluation = workload.evaluate();
      evaluated = true;
    }
    print_kernel_choices();  // the evaluation's shapes
    if (leader) {
      log_evaluation(style, round, evaluation);
      figures.update(evaluation_figures(evaluation));
    }
    if (metrics) metrics->epoch(round.index, figures);
    run.history.push_back(std::move(figures));
    position.history = std::move(run.history);  // lent to the schedule's save, not copied each round
    {
      Scope saving(page, Phase::kCheckpointSave);
      fault.in_slow_phase(page.steps());
      schedule.after_round(round, position, !stop);
    }
    run.history = std::move(position.history);
    position.history = nlohmann::json();
    workload.barrier();
  }

  nlohmann::json report;
  if (!evaluated && (leader || workload.evaluates_together())) {
    Scope evaluating(page, Phase::kEvaluation);
    evaluation = workload.evaluate();
    // Resumed with nothing left to train, a run that cannot evaluate again (an online run whose
    // passes are all saved holds no pass's test data) reports its last round's figures.
    if (!evaluation.acc1 && !evaluation.rmse && !evaluation.auc && !run.history.empty())
      evaluation = evaluation_from_figures(run.history.back());
  }
  if (leader) {
    Scope saving(page, Phase::kCheckpointSave);
    workload.save_final(position);
    run.position = position;
    run.samples_per_sec = train_seconds > 0 ? static_cast<double>(trained_samples) / train_seconds : 0.0;
    run.wall_seconds = seconds_since(started);
    report = write_report(config.output_dir, workload.identity(), run, evaluation);
    fmt::print("metrics: {}\n", report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    std::fflush(stdout);
  }
  workload.barrier();
  page.enter(Phase::kFinished);
  return report;
}

nlohmann::json run_training(const TrainConfig& config, Workload& workload, RunOrigin origin, Clock::time_point started,
                            ProgressLog* metrics) {
  EpochSchedule epochs(config, workload);
  return run_training(config, workload, epochs, origin, started, metrics);
}

}  // namespace paddle::runtime
