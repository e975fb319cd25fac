#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "runtime/train/run/training_loop.h"

using namespace paddle::runtime;

namespace {

// A workload of `batches` steps per epoch whose losses are 1/step; it records what the loop did.
class ScriptedWorkload : public Workload {
 public:
  explicit ScriptedWorkload(int batches) : batches_(batches) {}

  LogStyle log_style() const override { return LogStyle::kRegression; }
  std::string describe() const override { return "scripted"; }
  nlohmann::json identity() const override { return {{"model", "scripted"}}; }
  int worker_index() const override { return 0; }
  int worker_num() const override { return 2; }
  size_t global_batch() const override { return 8; }
  CheckpointPosition start() override { return start_; }
  void begin_round(int64_t epoch) override {
    epochs.push_back(epoch);
    left_ = batches_;
  }
  std::optional<StepResult> train_step(int64_t step) override {
    if (left_-- == 0) return std::nullopt;
    steps.push_back(step);
    return StepResult{nan_at == step ? std::numeric_limits<double>::quiet_NaN() : 1.0 / static_cast<double>(step + 1), {}};
  }
  void end_round() override { ++flushes; }
  Evaluation evaluate() override {
    Evaluation e;
    e.loss = 0.25;
    e.rmse = 0.5;
    ++evaluations;
    return e;
  }
  void save_checkpoint(const CheckpointPosition& at) override { checkpoints.push_back(at.rounds); }
  void save_final(const CheckpointPosition& at) override { final_step = at.step; }
  paddle::common::ProgressPage& progress() override { return page; }
  const TestFault& test_fault() const override { return fault_; }

  CheckpointPosition start_;
  int64_t nan_at = -1;
  std::vector<int64_t> epochs, steps, checkpoints;
  int flushes = 0, evaluations = 0;
  int64_t final_step = -1;
  paddle::common::ProgressPage page;

 private:
  TestFault fault_;
  int batches_, left_ = 0;
};

TrainConfig config_in(const std::string& dir, std::vector<std::string> overrides) {
  overrides.push_back("output_dir=" + dir);
  return load_train_config("", overrides);
}

std::string scratch_dir(const char* name) {
  const auto dir = std::filesystem::temp_directory_path() / (std::string("training_loop_test_") + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

}  // namespace

TEST_CASE("the loop runs every epoch's steps, evaluates, checkpoints and writes one report") {
  const std::string dir = scratch_dir("full");
  const TrainConfig config = config_in(dir, {"epochs=3"});
  ScriptedWorkload w(4);
  const nlohmann::json report = run_training(config, w);
  CHECK(w.epochs == std::vector<int64_t>{0, 1, 2});
  CHECK(w.steps.size() == 12);
  CHECK(w.steps.back() == 11);
  CHECK(w.flushes == 3);
  CHECK(w.evaluations == 3);
  CHECK(w.checkpoints == std::vector<int64_t>{1, 2, 3});
  CHECK(w.final_step == 12);
  CHECK(report["model"] == "scripted");
  CHECK(report["epochs"] == 3);
  CHECK(report["steps"] == 12);
  CHECK(report["world_size"] == 2);
  CHECK(report["train_loss"].get<double>() == doctest::Approx(1.0 / 12));
  CHECK(report["test_rmse"] == 0.5);
  CHECK(report["test_acc"].is_null());
  CHECK(report["test_auc"].is_null());
  std::ifstream file(std::filesystem::path(dir) / "metrics.json");
  CHECK(nlohmann::json::parse(file) == report);
}

TEST_CASE("max_steps stops mid-epoch without a checkpoint for the unfinished epoch") {
  const TrainConfig config = config_in(scratch_dir("max_steps"), {"epochs=5", "max_steps=6"});
  ScriptedWorkload w(4);
  const nlohmann::json report = run_training(config, w);
  CHECK(w.steps.size() == 6);
  CHECK(w.flushes == 2);  // the stopped epoch still sends what it holds
  CHECK(w.checkpoints == std::vector<int64_t>{1});
  CHECK(report["epochs"] == 1);
  CHECK(report["steps"] == 6);
}

TEST_CASE("a resumed run starts at its position, and one with nothing left still evaluates") {
  const TrainConfig config = config_in(scratch_dir("resume"), {"epochs=2"});
  ScriptedWorkload w(3);
  w.start_ = {1, 3};
  run_training(config, w);
  CHECK(w.epochs == std::vector<int64_t>{1});
  CHECK(w.steps == std::vector<int64_t>{3, 4, 5});
  ScriptedWorkload done(3);
  done.start_ = {2, 6};
  const nlohmann::json report = run_training(config, done);
  CHECK(done.steps.empty());
  CHECK(done.evaluations == 1);
  CHECK(report["steps"] == 6);
}

TEST_CASE("the report lists the run's generations: one for a fresh run, then each resumed one") {
  const TrainConfig first = config_in(scratch_dir("generations"), {"epochs=2"});
  ScriptedWorkload w(3);
  const nlohmann::json fresh = run_training(first, w);
  CHECK(fresh["generations"] ==
        nlohmann::json::parse(R"([{"generation": 0, "world_size": 2, "from_epoch": 0, "from_step": 0}])"));
  const TrainConfig more = config_in(first.output_dir, {"epochs=3"});
  ScriptedWorkload resumed(3);
  resumed.start_ = {2, 6};
  const nlohmann::json report = run_training(more, resumed, RunOrigin{1, true});
  CHECK(report["generations"] == nlohmann::json::parse(R"([
      {"generation": 0, "world_size": 2, "from_epoch": 0, "from_step": 0},
      {"generation": 1, "world_size": 2, "from_epoch": 2, "from_step": 6}])"));
  CHECK(report["epochs"] == 3);
  CHECK(report["steps"] == 9);
}

TEST_CASE("a NaN loss stops training with Paddle's message and exit status 3") {
  const TrainConfig config = config_in(scratch_dir("nan"), {"epochs=2"});
  ScriptedWorkload w(4);
  w.nan_at = 5;
  CHECK_THROWS_WITH_AS(run_training(config, w), "got NaN loss, training failed.", NanLossError);
  CHECK(w.steps.size() == 6);
  CHECK(NanLossError().exit_code() == 3);
}

namespace {

// Three named rounds (indices 10, 11, 12) that start past the first; it records its hooks.
class ScriptedSchedule : public Schedule {
 public:
  ScriptedSchedule() {
    for (int64_t i = 0; i < 3; ++i)
      rounds_.push_back({10 + i, "day: d pass: " + std::to_string(i + 1), {{"day", "d"}, {"pass", i + 1}}});
  }
  size_t round_count() const override { return rounds_.size(); }
  Round round(size_t index) const override { return rounds_.at(index); }
  CheckpointPosition start() override { return {1, 0}; }
  void before_round(const Round& round) override { before.push_back(round.index); }
  void after_round(const Round& round, const CheckpointPosition& at, bool complete) override {
    after.push_back({round.index, at.rounds, complete});
  }

  struct After {
    int64_t round, epochs_done;
    bool complete;
    bool operator==(const After&) const = default;
  };
  std::vector<int64_t> before;
  std::vector<After> after;

 private:
  std::vector<Round> rounds_;
};

}  // namespace

TEST_CASE("a schedule's rounds run from its start, with its hooks around each and its labels in the history") {
  const TrainConfig config = config_in(scratch_dir("schedule"), {"epochs=1"});
  ScriptedWorkload w(2);
  ScriptedSchedule schedule;
  const nlohmann::json report = run_training(config, w, schedule, {}, std::chrono::steady_clock::now(), nullptr);
  CHECK(w.epochs == std::vector<int64_t>{11, 12});
  CHECK(schedule.before == std::vector<int64_t>{11, 12});
  CHECK(schedule.after == std::vector<ScriptedSchedule::After>{{11, 2, true}, {12, 3, true}});
  CHECK(w.checkpoints.empty());  // checkpoints are the epoch schedule's
  REQUIRE(report["history"].size() == 2);
  CHECK(report["history"][1]["epoch"] == 12);
  CHECK(report["history"][1]["day"] == "d");
  CHECK(report["history"][1]["pass"] == 3);
  CHECK(report["epochs"] == 3);
  // Starting past the first round is a resume: the generation starts from there.
  CHECK(report["generations"][0]["from_epoch"] == 1);
}

TEST_CASE("a round cut short by max_steps reaches its schedule as incomplete") {
  const TrainConfig config = config_in(scratch_dir("schedule_max_steps"), {"max_steps=3"});
  ScriptedWorkload w(2);
  ScriptedSchedule schedule;
  run_training(config, w, schedule, {}, std::chrono::steady_clock::now(), nullptr);
  CHECK(w.steps.size() == 3);
  CHECK(schedule.after == std::vector<ScriptedSchedule::After>{{11, 2, true}, {12, 2, false}});
}
