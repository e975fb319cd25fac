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

// One run of the loop (training_loop.h), each phase a named step: begin (where the run starts, its
// history and generation), each round's steps, the round's close (figures, evaluation, the
// schedule's saves), and finish (the last evaluation and the report).
class TrainingRun {
 public:
  TrainingRun(const TrainConfig& config, Workload& workload, Schedule& schedule, RunOrigin origin,
              Clock::time_point started, ProgressLog* metrics)
      : config_(config), workload_(workload), schedule_(schedule), origin_(origin), started_(started), metrics_(metrics),
        leader_(workload.worker_index() == 0), style_(workload.log_style()), position_(schedule.start()),
        resume_(workload.resume_at()), page_(workload.progress()), fault_(workload.test_fault()),
        straggler_(workload.straggler_factor(), workload.worker_index(), page_,
                   [&workload](float busy) { return workload.gather_over_workers(busy); }),
        local_batch_(static_cast<double>(workload.global_batch()) / workload.worker_num()) {}

  nlohmann::json go() {
    begin();
    for (auto r = static_cast<size_t>(std::max<int64_t>(position_.rounds, 0)); r < schedule_.round_count() && !stop_; ++r)
      train_round(r);
    return finish();
  }

 private:
  // Where the run starts: a resumed one goes on with the figures of the rounds it resumed after,
  // and the leader records this generation.
  void begin() {
    if (resume_) {
      position_.rounds = resume_->round;
      position_.step = resume_->step;
    }
    fmt::print("{}\n", workload_.describe());
    run_.world_size = workload_.worker_num();
    if (position_.history.is_array()) {
      run_.history = std::move(position_.history);
      if (!run_.history.empty() && run_.history.back().is_object() && run_.history.back().contains("train_loss") &&
          run_.history.back()["train_loss"].is_number())
        run_.train_loss = run_.history.back()["train_loss"].get<double>();
    }
    position_.history = nlohmann::json();
    if (leader_) {
      const Generation now{origin_.generation, run_.world_size, position_};
      const bool resuming = origin_.resuming || position_.rounds > 0 || position_.step > 0;
      run_.generations = record_generation(config_.output_dir, now, resuming);
      fmt::print("generations: {}\n", describe_generations(run_.generations));
    }
    std::fflush(stdout);
    line_time_ = Clock::now();
    line_step_ = position_.step;
    line_comm_ = workload_.communication_seconds();
  }

  void train_round(size_t r) {
    const Round round = schedule_.round(r);
    schedule_.before_round(round);
    const auto round_start = Clock::now();
    const int64_t round_first_step = position_.step;
    workload_.begin_round(round.index);
    StepPlace at{round, 0, position_.step};
    if (resume_ && static_cast<int64_t>(r) == resume_->round) {
      workload_.skip_batches(resume_->batch);
      at.batch = resume_->batch;
    }
    const auto number = static_cast<int64_t>(r);
    workload_.mark_progress(number, at.batch, position_.step, false);
    page_.enter(Phase::kCompute);
    page_.begin_steps();
    train_steps(number, at);
    // Before the round's end (a shrink's barriers, an evaluation's), and after it, with all acknowledged.
    workload_.mark_progress(number, at.batch, position_.step, true);
    workload_.end_round();
    schedule_.end_round(round);
    workload_.mark_progress(number, at.batch, position_.step, true);
    const double round_seconds = seconds_since(round_start);
    train_seconds_ += round_seconds;
    if (!stop_) position_.rounds = static_cast<int64_t>(r) + 1;
    close_round(round, round_seconds, position_.step - round_first_step);
  }

  // The round's steps, until it ends or max_steps.
  void train_steps(int64_t number, StepPlace& at) {
    while (auto result = workload_.train_step(position_.step)) {
      at.step = ++position_.step;
      if (!first_step_done_) print_kernel_choices();  // the training step's shapes
      first_step_done_ = true;
      workload_.mark_progress(number, at.batch + 1, position_.step, false);
      run_.train_loss = workload_.mean_over_workers(result->loss);
      page_.step_done();
      straggler_.step_done(at.step);
      if (!std::isfinite(run_.train_loss)) throw NanLossError();
      log_step(style_, config_.log_every, at, run_.train_loss, *result);
      if (metrics_ && at.step % config_.log_every == 0) write_metrics_line(at);
      ++at.batch;
      trained_samples_ += static_cast<int64_t>(workload_.global_batch());
      if (config_.max_steps > 0 && position_.step >= config_.max_steps) {
        stop_ = true;
        return;
      }
    }
  }

  void write_metrics_line(const StepPlace& at) {
    const double seconds = seconds_since(line_time_), comm = workload_.communication_seconds();
    const auto steps = static_cast<double>(at.step - line_step_);
    metrics_->step({at.step, at.round.index, run_.train_loss, workload_.learning_rate(at.step - 1),
                    seconds > 0 ? steps * local_batch_ / seconds : 0.0, steps > 0 ? (comm - line_comm_) / steps : 0.0});
    line_time_ = Clock::now();
    line_step_ = at.step;
    line_comm_ = comm;
  }

  // The round's figures and evaluation, then the schedule's saves and a barrier.
  void close_round(const Round& round, double round_seconds, int64_t round_steps) {
    nlohmann::json figures = {
        {"epoch", round.index},
        {"train_loss", run_.train_loss},
        {"seconds", round_seconds},
        {"samples_per_sec", round_seconds > 0 ? static_cast<double>(round_steps) *
                                                    static_cast<double>(workload_.global_batch()) / round_seconds
                                              : 0.0}};
    figures.update(round.labels);
    if (leader_ || workload_.evaluates_together()) {
      Scope evaluating(page_, Phase::kEvaluation);
      fault_.in_slow_phase(page_.steps());
      evaluation_ = workload_.evaluate();
      evaluated_ = true;
    }
    print_kernel_choices();  // the evaluation's shapes
    if (leader_) {
      log_evaluation(style_, round, evaluation_);
      figures.update(evaluation_figures(evaluation_));
    }
    if (metrics_) metrics_->round_done(round.index, figures);
    run_.history.push_back(std::move(figures));
    position_.history = std::move(run_.history);  // lent to the schedule's save, not copied each round
    {
      Scope saving(page_, Phase::kCheckpointSave);
      fault_.in_slow_phase(page_.steps());
      schedule_.after_round(round, position_, !stop_);
    }
    run_.history = std::move(position_.history);
    position_.history = nlohmann::json();
    workload_.barrier();
  }

  // The last evaluation where no round evaluated, the leader's final saves and report.
  nlohmann::json finish() {
    nlohmann::json report;
    if (!evaluated_ && (leader_ || workload_.evaluates_together())) {
      Scope evaluating(page_, Phase::kEvaluation);
      evaluation_ = workload_.evaluate();
      // Resumed with nothing left to train, a run that cannot evaluate again (an online run whose
      // passes are all saved holds no pass's test data) reports its last round's figures.
      if (!evaluation_.acc1 && !evaluation_.rmse && !evaluation_.auc && !run_.history.empty())
        evaluation_ = evaluation_from_figures(run_.history.back());
    }
    if (leader_) {
      Scope saving(page_, Phase::kCheckpointSave);
      workload_.save_final(position_);
      run_.position = position_;
      run_.samples_per_sec = train_seconds_ > 0 ? static_cast<double>(trained_samples_) / train_seconds_ : 0.0;
      run_.wall_seconds = seconds_since(started_);
      report = write_report(config_.output_dir, workload_.identity(), run_, evaluation_);
      fmt::print("metrics: {}\n", report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      std::fflush(stdout);
    }
    workload_.barrier();
    page_.enter(Phase::kFinished);
    return report;
  }

  // The kernels chosen at their shapes' first use, each said once.
  void print_kernel_choices() {
    const std::vector<std::string> choices = workload_.kernel_choices();
    for (; choices_printed_ < choices.size(); ++choices_printed_) fmt::print("kernel: {}\n", choices[choices_printed_]);
    std::fflush(stdout);
  }

  const TrainConfig& config_;
  Workload& workload_;
  Schedule& schedule_;
  const RunOrigin origin_;
  const Clock::time_point started_;
  ProgressLog* const metrics_;
  const bool leader_;
  const LogStyle style_;
  CheckpointPosition position_;
  const std::optional<WorkerMark> resume_;
  common::ProgressPage& page_;
  const TestFault& fault_;
  StragglerWindow straggler_;
  const double local_batch_;

  RunFigures run_;
  double train_seconds_ = 0;
  int64_t trained_samples_ = 0;
  Evaluation evaluation_;
  bool evaluated_ = false, stop_ = false, first_step_done_ = false;
  size_t choices_printed_ = 0;
  // Where the last metrics line was written, for the rates of the next.
  Clock::time_point line_time_;
  int64_t line_step_ = 0;
  double line_comm_ = 0;
};

}  // namespace

nlohmann::json run_training(const TrainConfig& config, Workload& workload, Schedule& schedule, RunOrigin origin,
                            Clock::time_point started, ProgressLog* metrics) {
  return TrainingRun(config, workload, schedule, origin, started, metrics).go();
}

nlohmann::json run_training(const TrainConfig& config, Workload& workload, RunOrigin origin, Clock::time_point started,
                            ProgressLog* metrics) {
  EpochSchedule epochs(config, workload);
  return run_training(config, workload, epochs, origin, started, metrics);
}

}  // namespace paddle::runtime
