#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/train/workloads/worker_progress.h"

using namespace paddle::runtime;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

WorkerMark mark(int64_t pass, int64_t batch, int64_t step, uint64_t barriers, bool round_trained = false,
                bool barrier_per_step = false) {
  WorkerMark m;
  m.round = pass;
  m.batch = batch;
  m.step = step;
  m.barriers = barriers;
  m.round_trained = round_trained;
  m.barrier_per_step = barrier_per_step;
  return m;
}

}  // namespace

TEST_CASE("a progress mark survives its writer, and a torn or foreign file reads as no mark") {
  const fs::path dir = scratch("worker-progress");
  const fs::path file = dir / "workerprogress.2";
  {
    WorkerProgress first(file, 0);
    CHECK_FALSE(first.last());  // a new file holds none
    first.record(mark(3, 17, 417, 5, true, true));
    WorkerMark evaluated = mark(3, 18, 418, 6, false, true);
    evaluated.counted = true;
    first.record(evaluated);
  }
  WorkerProgress restarted(file, 1);
  CHECK(restarted.restarts() == 1);
  REQUIRE(restarted.last());
  WorkerMark expected = mark(3, 18, 418, 6, false, true);
  expected.counted = true;
  CHECK(*restarted.last() == expected);

  {
    std::fstream bytes(file, std::ios::in | std::ios::out | std::ios::binary);
    bytes.seekp(20);
    bytes.put('\x7f');  // a flipped byte: the CRC no longer agrees
  }
  CHECK_FALSE(restarted.last());
  std::ofstream(file, std::ios::trunc) << "not a mark";
  CHECK_FALSE(restarted.last());
  fs::remove_all(dir);
}

TEST_CASE("from the environment: the launcher's file and restart count, nothing without a file") {
  const fs::path dir = scratch("worker-progress-env");
  CHECK_FALSE(WorkerProgress::from_environment({}));
  auto kept = WorkerProgress::from_environment(
      {{"PADDLE_PS_WORKER_PROGRESS", (dir / "p").string()}, {"PADDLE_PS_WORKER_RESTART_COUNT", "2"}});
  REQUIRE(kept);
  CHECK(kept->restarts() == 2);
  CHECK_THROWS_WITH_AS(WorkerProgress::from_environment({{"PADDLE_PS_WORKER_PROGRESS", (dir / "p").string()},
                                                        {"PADDLE_PS_WORKER_RESTART_COUNT", "-1"}}),
                       "PADDLE_PS_WORKER_RESTART_COUNT=-1 is negative", paddle::common::ConfigError);
  CHECK_THROWS_WITH_AS(WorkerProgress::from_environment({{"PADDLE_PS_WORKER_PROGRESS", (dir / "no/such/p").string()}}),
                       doctest::Contains("no/such/p: cannot open the worker's progress (PADDLE_PS_WORKER_PROGRESS)"),
                       paddle::common::DataError);
  fs::remove_all(dir);
}

TEST_CASE("where a restarted worker takes up, by its last mark and the barriers the job has completed") {
  struct Case {
    const char* what;
    std::optional<WorkerMark> last;
    uint64_t completed;
    std::optional<WorkerMark> expected;  // none: from the start
    const char* refused = nullptr;       // CannotRejoin's message contains this
  };
  const Case cases[] = {
      {"died before its first barrier, as did the job: from the start", std::nullopt, 0, std::nullopt},
      {"no mark, past the first barrier: the first pass from its start", std::nullopt, 1, mark(3, 0, 0, 1)},
      {"no mark, but the job went past barriers", std::nullopt, 2, std::nullopt, "left no progress mark"},
      {"async mid-pass: at its acknowledged batch", mark(1, 40, 140, 3), 3, mark(1, 40, 140, 3)},
      {"sync: died before its step's barrier completed, so the step again", mark(0, 9, 9, 10, false, true), 10,
       mark(0, 9, 9, 10, false, true)},
      {"sync: the step's barrier completed before the mark said so: the next step", mark(0, 9, 9, 10, false, true),
       11, mark(0, 10, 10, 11, false, true)},
      {"async mid-pass: a barrier since the mark is none it knows", mark(1, 40, 140, 3), 4, std::nullopt,
       "past a barrier its mark does not know"},
      {"pass trained: the barriers since are its end's, to pass over", mark(0, 50, 50, 51, true, true), 54,
       mark(0, 50, 50, 51, true, true)},
      {"pass trained, but more barriers since than a pass's end has", mark(0, 50, 50, 51, true, true), 57, std::nullopt,
       "past its pass's end"},
      {"two barriers past a sync mark", mark(0, 9, 9, 10, false, true), 12, std::nullopt, "has completed 12"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    if (c.refused) {
      CHECK_THROWS_WITH_AS(resume_point(c.last, c.completed, 3), doctest::Contains(c.refused), CannotRejoin);
      continue;
    }
    CHECK(resume_point(c.last, c.completed, 3) == c.expected);
  }
  try {
    resume_point(mark(1, 40, 140, 3), 4, 0);
  } catch (const CannotRejoin& e) {
    CHECK(e.exit_code() == 75);
  }
}
