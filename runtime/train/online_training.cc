#include "runtime/train/online_training.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/wait.h"
#include "runtime/train/online_passes.h"
#include "runtime/train/report.h"
#include "runtime/train/training_loop.h"

namespace paddle::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Records `save` in the donefile, replacing an earlier record of the same save (a pass run again).
void record_save(const std::string& save_dir, std::vector<OnlineSave>& saves, OnlineSave save) {
  std::erase_if(saves, [&](const OnlineSave& s) { return s.day == save.day && s.pass == save.pass && s.mode == save.mode; });
  saves.push_back(std::move(save));
  write_online_saves(save_dir, saves);
}

// Waits up to `online.wait_seconds` for the pass's data, saying what it waits for every kSayEvery.
void wait_for_data(const OnlineConfig& online, const OnlinePass& pass) {
  constexpr auto kSayEvery = std::chrono::seconds(5);
  constexpr auto kLookEvery = std::chrono::milliseconds(100);
  const auto start = Clock::now();
  auto said = start - kSayEvery;  // the first miss says so at once
  const bool ready = common::wait_until(
      std::chrono::seconds(online.wait_seconds),
      [&] {
        if (pass_data_ready(pass.data)) return true;
        if (Clock::now() - said >= kSayEvery) {
          fmt::print("online: waiting for the data of day {} pass {} at {} ({:.0f} of ps.online.wait_seconds={} s)\n",
                     pass.day, pass.pass, pass.data, seconds_since(start), online.wait_seconds);
          std::fflush(stdout);
          said = Clock::now();
        }
        return false;
      },
      kLookEvery);
  if (!ready)
    throw common::DataError(fmt::format("{}: the data of day {} pass {} (ps.online.data_pattern) is not there{}", pass.data,
                                        pass.day, pass.pass,
                                        online.wait_seconds > 0 ? fmt::format(" after ps.online.wait_seconds={}", online.wait_seconds)
                                                                : std::string(" (a directory is complete once it holds _SUCCESS)")));
}

void shrink(Fleet& fleet, const std::string& why) {
  for (const ps::ShrinkReport& report : fleet.shrink())
    fmt::print("shrink ({}): {}\n", why, ps::describe(report));
  std::fflush(stdout);
}

}  // namespace

nlohmann::json run_online_training(const TrainConfig& config, Fleet& fleet, CtrWorkload& workload,
                                   Clock::time_point started, ProgressLog* metrics) {
  const OnlineConfig& online = config.ps.online;
  const std::string& save_dir = config.ps.save_dir;
  const bool leader = fleet.is_first_worker();
  fmt::print("{}\n", workload.describe());
  const std::vector<OnlinePass> passes = online_passes(online, save_dir);
  std::vector<OnlineSave> saves = read_online_saves(save_dir);
  const size_t resume_at = first_unsaved_pass(passes, saves);
  if (leader)
    for (const OnlineSave& s : saves_to_load(passes, saves, resume_at)) {
      fmt::print("online: loading the {} of day {}{} from {}\n", ps::save_mode_name(s.mode), s.day,
                 s.mode == ps::SaveMode::kDelta ? fmt::format(" pass {}", s.pass) : "", s.dir);
      fleet.server_control().load(s.dir);
    }
  if (resume_at == passes.size()) fmt::print("online: every pass of {} day(s) is saved already\n", online.days.size());
  else if (resume_at > 0)
    fmt::print("online: resuming at day {} pass {} ({} of {} passes saved)\n", passes[resume_at].day, passes[resume_at].pass,
               resume_at, passes.size());
  std::fflush(stdout);
  workload.begin(/*initialize_dense=*/resume_at == 0, /*passes_done=*/static_cast<int64_t>(resume_at));

  RunFigures run;
  run.world_size = fleet.worker_num();
  Evaluation evaluation;
  double train_seconds = 0;
  int64_t trained_samples = 0, step = 0;
  for (size_t i = resume_at; i < passes.size(); ++i) {
    const OnlinePass& pass = passes[i];
    wait_for_data(online, pass);
    workload.use_pass_data(pass.data);
    const auto pass_start = Clock::now();
    workload.begin_epoch(static_cast<int64_t>(pass.index));
    int64_t pass_steps = 0;
    double loss = 0;
    while (auto result = workload.train_step(step)) {
      ++step;
      ++pass_steps;
      loss = result->loss;
      if (!std::isfinite(loss)) throw NanLossError();
      if (step % config.log_every == 0) {
        fmt::print("TRAIN ---> day: {} pass: {} loss: {:.6f}\n", pass.day, pass.pass, loss);
        std::fflush(stdout);
        if (metrics) metrics->step({step, static_cast<int64_t>(pass.index), loss, std::nullopt, 0.0, 0.0});
      }
    }
    workload.end_epoch();
    const double seconds = seconds_since(pass_start);
    train_seconds += seconds;
    trained_samples += pass_steps * static_cast<int64_t>(workload.global_batch());
    evaluation = workload.evaluate();
    nlohmann::json figures = {{"day", pass.day},
                              {"pass", pass.pass},
                              {"epoch", pass.index},
                              {"train_loss", loss},
                              {"seconds", seconds},
                              {"samples_per_sec", seconds > 0 ? static_cast<double>(pass_steps) *
                                                                    static_cast<double>(workload.global_batch()) / seconds
                                                              : 0.0}};
    figures.update(evaluation_figures(evaluation));
    if (metrics && leader) metrics->epoch(pass.index, figures);
    run.history.push_back(figures);
    run.train_loss = loss;
    if (leader) {
      fmt::print("TEST ---> day: {} pass: {} auc: {:.6f} loss: {:.6f} samples: {:.0f}\n", pass.day, pass.pass,
                 evaluation.auc.value_or(0.5), evaluation.loss, evaluation.samples.value_or(0));
      fleet.save_persistables(pass.delta_dir, ps::SaveMode::kDelta);
      record_save(save_dir, saves, {pass.day, pass.pass, ps::SaveMode::kDelta, pass.delta_dir});
      if (pass.last_of_day) {
        shrink(fleet, fmt::format("end of day {}", pass.day));
        fleet.save_persistables(pass.base_dir, ps::SaveMode::kBase);
        record_save(save_dir, saves, {pass.day, 0, ps::SaveMode::kBase, pass.base_dir});
      }
      std::fflush(stdout);
    }
    fleet.ps_barrier();  // the saves are done before anyone pushes the next pass
  }

  nlohmann::json report;
  if (leader) {
    run.position = {static_cast<int64_t>(passes.size()), step};
    run.samples_per_sec = train_seconds > 0 ? static_cast<double>(trained_samples) / train_seconds : 0.0;
    run.wall_seconds = seconds_since(started);
    report = write_report(config.output_dir, workload.identity(), run, evaluation);
    fmt::print("metrics: {}\n", report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    std::fflush(stdout);
  }
  fleet.ps_barrier();
  return report;
}

}  // namespace paddle::runtime
