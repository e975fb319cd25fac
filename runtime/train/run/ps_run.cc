#include "runtime/train/run/ps_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <utility>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/file.h"
#include "common/wait.h"
#include "ps/client/barrier_rejoin.h"
#include "ps/table/checkpoint.h"

namespace paddle::runtime {
namespace {

using Clock = std::chrono::steady_clock;

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
                     pass.day, pass.pass, pass.data, std::chrono::duration<double>(Clock::now() - start).count(),
                     online.wait_seconds);
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

}  // namespace

PsRun::PsRun(const TrainConfig& config, const common::Environment& env, Fleet& fleet, PsWorkload& workload)
    : config_(config),
      fleet_(fleet),
      workload_(workload),
      kept_(fleet.topology().kind == JobKind::kParameterServer ? WorkerProgress::from_environment(env) : std::nullopt) {
  if (kept_ && kept_->restarts() > 0) dead_self_ = kept_->last();
  if (config.ps.online.enabled()) {
    online_ = dynamic_cast<CtrWorkload*>(&workload);
    if (online_ == nullptr) throw std::logic_error("PsRun: an online run's workload is a CtrWorkload");
    passes_ = online_passes(config.ps.online, config.ps.save_dir);
    saves_ = read_online_saves(config.ps.save_dir);
    for (const OnlinePass& pass : passes_)
      rounds_.push_back({static_cast<int64_t>(pass.index), fmt::format("day: {} pass: {}", pass.day, pass.pass),
                         {{"day", pass.day}, {"pass", pass.pass}}});
  } else {
    for (int64_t epoch = 0; epoch < config.epochs; ++epoch)
      rounds_.push_back({epoch, fmt::format("pass: {}", epoch), nlohmann::json::object()});
  }
}

bool PsRun::finished_before() {
  if (!dead_self_ || !dead_self_->finished) return false;
  fmt::print("worker {} restarted in place (restart {}): it had finished before it died; nothing is left to do\n",
             fleet_.worker_index(), kept_->restarts());
  return true;
}

std::optional<WorkerMark> PsRun::rejoin() {
  if (config_.ps.online.enabled())
    throw CannotRejoin("an online run's worker is not restarted alone: its passes wait on each other's saves");
  if (dynamic_cast<const CtrWorkload*>(&workload_) == nullptr)
    throw CannotRejoin(fmt::format("model {} does not take up a pass in the middle; only wide_deep's workers are "
                                   "restarted alone", kModelNames.name(config_.model.kind)));
  ps::ServerControl& servers = fleet_.server_control();
  try {
    servers.rejoin();
  } catch (const ps::SplitBarrier& e) {
    throw CannotRejoin(e.what());
  }
  std::optional<WorkerMark> at = resume_point(dead_self_, servers.barriers_completed(), config_.ps.start_pass);
  if (at) fleet_.pass_barriers(servers.barriers_completed() - at->barriers);
  fmt::print("worker {} restarted in place (restart {}): {}; the servers kept their tables\n", fleet_.worker_index(),
             kept_->restarts(),
             at ? fmt::format("taking up pass {} at batch {} (step {}), {} barrier(s) completed{}", at->round,
                              at->batch, at->step, servers.barriers_completed(),
                              fleet_.barriers_to_pass() > 0
                                  ? fmt::format(", the last {} of them reached before the restart", fleet_.barriers_to_pass())
                                  : "")
                : std::string("starting from the beginning, as the job has not begun"));
  std::fflush(stdout);
  return at;
}

nlohmann::json PsRun::saved_figures(size_t passes) const {
  nlohmann::json history = nlohmann::json::array();
  for (size_t i = 0; i < passes; ++i) {
    const std::filesystem::path path = std::filesystem::path(passes_[i].delta_dir) / kPassFigures;
    const std::optional<std::string> text = common::read_file(path);
    if (!text) continue;  // saved by a build before figures were kept
    nlohmann::json figures = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (figures.is_object())
      history.push_back(std::move(figures));
    else  // the figures are the report's, not the model's: the run goes on without them
      fmt::print("online: leaving out {} from the run's history: not a JSON object\n", path.string());
  }
  return history;
}

size_t PsRun::first_pass_to_train() {
  const int servers = static_cast<int>(fleet_.topology().server_endpoints.size());
  while (true) {
    const size_t resume_at = first_unsaved_pass(passes_, saves_);
    std::optional<std::pair<OnlineSave, std::string>> damaged;
    for (const OnlineSave& s : saves_to_load(passes_, saves_, resume_at)) {
      try {
        ps::verify_checkpoint(s.dir, servers);
      } catch (const common::DataError& e) {
        damaged.emplace(s, e.what());
        break;
      }
    }
    if (!damaged) return resume_at;
    // The save and every save after it, which built on it, count as not made: their passes run again.
    const auto at = std::find_if(saves_.begin(), saves_.end(), [&](const OnlineSave& s) {
      return s.day == damaged->first.day && s.pass == damaged->first.pass && s.mode == damaged->first.mode;
    });
    fmt::print("online: refusing a damaged save: {}; the {} of day {}{} and the {} save(s) after it count as not made\n",
               damaged->second, ps::save_mode_name(damaged->first.mode), damaged->first.day,
               damaged->first.mode == ps::SaveMode::kDelta ? fmt::format(" pass {}", damaged->first.pass) : "",
               saves_.end() - at - 1);
    saves_.erase(at, saves_.end());
  }
}

void PsRun::connect() {
  fleet_.init_worker(workload_.tables());
  // In a PS job the servers load ps.init_dir; a lone process loads it into its own tables.
  if (fleet_.topology().kind == JobKind::kSingle && !config_.ps.init_dir.empty())
    fleet_.server_control().load(config_.ps.init_dir);
  if (kept_ && kept_->restarts() > 0) resume_ = rejoin();
  if (kept_) workload_.keep_progress(*kept_);
}

CheckpointPosition PsRun::start() {
  if (resume_) {
    rounds_ended_ = resume_->round;
    workload_.begin_in_place(*resume_);
    return workload_.start();
  }
  if (!online_) {
    rounds_ended_ = config_.ps.start_pass;
    workload_.begin();
    return workload_.start();
  }
  const size_t resume_at = first_pass_to_train();
  if (fleet_.is_first_worker())
    for (const OnlineSave& s : saves_to_load(passes_, saves_, resume_at)) {
      fmt::print("online: loading the {} of day {}{} from {}\n", ps::save_mode_name(s.mode), s.day,
                 s.mode == ps::SaveMode::kDelta ? fmt::format(" pass {}", s.pass) : "", s.dir);
      fleet_.server_control().load(s.dir);
    }
  if (resume_at == passes_.size())
    fmt::print("online: every pass of {} day(s) is saved already\n", config_.ps.online.days.size());
  else if (resume_at > 0)
    fmt::print("online: resuming at day {} pass {} ({} of {} passes saved)\n", passes_[resume_at].day,
               passes_[resume_at].pass, resume_at, passes_.size());
  std::fflush(stdout);
  rounds_ended_ = static_cast<int64_t>(resume_at);
  workload_.begin(/*initialize_dense=*/resume_at == 0);
  CheckpointPosition at{static_cast<int64_t>(resume_at), 0};
  at.history = saved_figures(resume_at);
  return at;
}

void PsRun::before_round(const Round& round) {
  if (!online_) return;
  const OnlinePass& pass = passes_.at(static_cast<size_t>(round.index));
  wait_for_data(config_.ps.online, pass);
  online_->use_pass_data(pass.data);
}

void PsRun::end_round(const Round&) {
  const int64_t every = config_.ps.sparse.shrink_every_passes;
  if (every <= 0 || ++rounds_ended_ % every != 0) return;
  fleet_.ps_barrier();  // no worker pushes while the tables shrink
  if (fleet_.is_first_worker())
    for (const ps::ShrinkReport& report : fleet_.shrink()) fmt::print("shrink (every {} passes): {}\n", every, ps::describe(report));
  std::fflush(stdout);
  fleet_.ps_barrier();
}

void PsRun::after_round(const Round& round, const CheckpointPosition& at, bool complete) {
  if (!online_) return;
  const OnlinePass& pass = passes_.at(static_cast<size_t>(round.index));
  if (complete && fleet_.is_first_worker()) {
    const std::string& save_dir = config_.ps.save_dir;
    fleet_.save_persistables(pass.delta_dir, ps::SaveMode::kDelta);
    if (at.history.is_array() && !at.history.empty())
      common::write_file_atomically(std::filesystem::path(pass.delta_dir) / kPassFigures,
                                    at.history.back().dump() + "\n");
    record_save(save_dir, saves_, {pass.day, pass.pass, ps::SaveMode::kDelta, pass.delta_dir});
    if (pass.last_of_day) {
      for (const ps::ShrinkReport& report : fleet_.shrink())
        fmt::print("shrink (end of day {}): {}\n", pass.day, ps::describe(report));
      fleet_.save_persistables(pass.base_dir, ps::SaveMode::kBase);
      record_save(save_dir, saves_, {pass.day, 0, ps::SaveMode::kBase, pass.base_dir});
    }
    std::fflush(stdout);
  }
  fleet_.ps_barrier();  // the saves are done before anyone pushes the next pass
}

void PsRun::finish() {
  if (fleet_.is_first_worker() && !config_.ps.save_dir.empty() && !online_) fleet_.save_persistables(config_.ps.save_dir);
  fleet_.stop_worker();
  workload_.note_finished();
}

}  // namespace paddle::runtime
