#include "runtime/train/run/straggler_window.h"

#include <doctest/doctest.h>

using namespace paddle;
using namespace paddle::runtime;

namespace {

// Four ranks' mean busy seconds per step: this one is rank 3 (`mine`; what the page measured is
// left aside), the other three `others`.
struct Job {
  common::ProgressPage page;
  float mine = 0.010f, others = 0.010f;
  int gathers = 0;
  StragglerWindow window{2.0, 3, page, [this](float) {
                           ++gathers;
                           return std::vector<float>{others, others, others, mine};
                         }};
};

}  // namespace

TEST_CASE("a rank past the factor in 3 of its last 5 windows of 5 steps is a straggler, until below in all of them") {
  Job job;
  int64_t step = 0;
  const auto run = [&](int steps) {
    for (int i = 0; i < steps; ++i) {
      job.page.step_done();
      job.window.step_done(++step);
    }
  };
  job.others = 0.001f;  // far faster in the first steps: warming up is no straggler
  run(25);
  CHECK_FALSE(job.window.straggler());
  job.others = 0.020f;  // the others slower: this rank is no straggler
  run(25);
  CHECK(job.gathers == 10);  // one allgather every 5 steps, warm or not
  CHECK_FALSE(job.window.straggler());
  job.others = 0.004f;  // now it takes 2.5 times the others' time
  run(10);
  CHECK_FALSE(job.window.straggler());  // 2 windows
  run(5);
  CHECK(job.window.straggler());  // the 3rd: flagged within 15 steps
  CHECK(job.window.ratio() == doctest::Approx(2.5));
  job.others = 0.010f;  // it recovers
  run(20);
  CHECK(job.window.straggler());  // 4 of the last 5 windows below
  // Still flagged by the one window past the factor: its ratio is said, not the 1.0 of the rest.
  CHECK(job.window.ratio() == doctest::Approx(2.5));
  run(5);
  CHECK_FALSE(job.window.straggler());  // all 5: cleared
  CHECK(job.window.ratio() == doctest::Approx(1.0));
}

TEST_CASE("past the factor by less than the scheduler's noise is no straggler: tens of microseconds vary so") {
  Job job;
  job.mine = 0.0003f;
  job.others = 0.0001f;  // 3 times, but 0.2 ms more
  for (int64_t step = 1; step <= 200; ++step) {
    job.page.step_done();
    job.window.step_done(step);
  }
  CHECK_FALSE(job.window.straggler());
}

TEST_CASE("a factor of 0 judges nothing and gathers nothing") {
  common::ProgressPage page;
  int gathers = 0;
  StragglerWindow window(0, 0, page, [&](float v) {
    ++gathers;
    return std::vector<float>{v, 0};
  });
  for (int64_t step = 1; step <= 100; ++step) window.step_done(step);
  CHECK(gathers == 0);
  CHECK_FALSE(window.straggler());
}
