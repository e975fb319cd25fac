#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <thread>

#include "common/progress_page.h"

using namespace paddle::common;
using namespace std::chrono_literals;

TEST_CASE("a reader sees the writer's phase, step and collective through the file") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("progress_page_test." + std::to_string(::getpid()))).string();
  std::filesystem::remove(path);
  CHECK_FALSE(read_progress_page(path));  // no file yet
  {
    ProgressPage page(path);
    auto r = read_progress_page(path);
    REQUIRE(r);
    CHECK(r->phase == Phase::kStarting);
    CHECK(r->steps == 0);
    const uint64_t marks = r->marks;

    page.enter(Phase::kDataLoading);
    page.enter(Phase::kCompute);
    {
      ProgressPage::Scope in(page, CollectiveKind::kAllreduce, 4096);
      r = read_progress_page(path);
      CHECK(r->phase == Phase::kCollective);
      CHECK(r->collective == CollectiveKind::kAllreduce);
      CHECK(r->collectives == 1);
      CHECK(r->collective_bytes == 4096);
      CHECK(r->collective_label() == "allreduce #1");
      CHECK(r->describe(monotonic_ns()).starts_with("in allreduce #1 (4.0 KB) for 0 s, after step 0"));
    }
    page.step_done();
    r = read_progress_page(path);
    CHECK(r->phase == Phase::kCompute);  // the scope restored it
    CHECK(r->steps == 1);
    CHECK(r->marks > marks);
    CHECK(r->collective_label() == "allreduce #1");  // the last one, after it ended
    CHECK(r->describe(monotonic_ns()) == "in compute for 0 s, after step 1, last collective allreduce #1");
    page.set_straggler(2.5, 10);
    r = read_progress_page(path);
    CHECK(r->straggler_ratio == 2.5);
    CHECK(r->straggler_since == 10);
  }
  std::filesystem::remove(path);
}

TEST_CASE("busy time leaves out the waits in collectives and on the servers") {
  ProgressPage page;
  page.enter(Phase::kCompute);
  std::this_thread::sleep_for(20ms);
  {
    ProgressPage::Scope in(page, CollectiveKind::kAllreduce, 4);
    std::this_thread::sleep_for(60ms);
  }
  {
    ProgressPage::Scope pull(page, Phase::kPsPull);
    std::this_thread::sleep_for(40ms);
  }
  page.step_done();
  CHECK(page.last_busy_seconds() >= 0.018);
  CHECK(page.last_busy_seconds() < 0.06);  // not the 120 ms of the whole step
  CHECK(page.steps() == 1);
  CHECK(page.collectives() == 1);

  // A step that ends inside a wait counts that wait's part after the end in the next step only.
  {
    ProgressPage::Scope in(page, CollectiveKind::kBarrier, 0);
    std::this_thread::sleep_for(30ms);
    page.step_done();
    CHECK(page.last_busy_seconds() < 0.02);
    std::this_thread::sleep_for(30ms);
  }
  std::this_thread::sleep_for(20ms);
  page.step_done();
  CHECK(page.last_busy_seconds() >= 0.018);
  CHECK(page.last_busy_seconds() < 0.045);
}

TEST_CASE("a file that is not a page, or not opened by its process yet, reads as none") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("progress_page_empty." + std::to_string(::getpid()))).string();
  { std::FILE* f = std::fopen(path.c_str(), "w"); std::fputs("not a page", f); std::fclose(f); }
  CHECK_FALSE(read_progress_page(path));
  std::filesystem::remove(path);
}

TEST_CASE("phases that wait on others") {
  CHECK(waits_on_others(Phase::kCollective));
  CHECK(waits_on_others(Phase::kPsPull));
  CHECK(waits_on_others(Phase::kPsPush));
  CHECK_FALSE(waits_on_others(Phase::kDataLoading));
  CHECK_FALSE(waits_on_others(Phase::kEvaluation));
  CHECK(phase_name(Phase::kCheckpointSave) == "a checkpoint save");
}
