#include "runtime/train/straggler_window.h"

#include <doctest/doctest.h>

using namespace paddle;
using namespace paddle::runtime;

namespace {

// Four ranks; this one is rank 3, and `others` is what the other three's mean busy time is.
struct Job {
  common::ProgressPage page;
  float others = 0.010f;
  int gathers = 0;
  StragglerWindow window{2.0, 3, page, [this](float mine) {
                           ++gathers;
                           return std::vector<float>{others, others, others, mine};
                         }};
};

}  // namespace

TEST_CASE("a rank past the factor in 3 of its last 5 windows of 5 steps is a straggler, until below in all of them") {
  Job job;
  // Steps of this rank's own busy time: the page measures them; a flat 1 ms here.
  int64_t step = 0;
  const auto run = [&](int steps) {
    for (int i = 0; i < steps; ++i) {
      job.page.step_done();
      job.window.step_done(++step);
    }
  };
  job.others = 1.0f;  // the others far slower: this rank is no straggler
  run(50);
  CHECK(job.gathers == 10);  // one allgather every 5 steps
  CHECK_FALSE(job.window.straggler());
  job.others = 1e-9f;  // now it is far slower than the others
  run(10);
  CHECK_FALSE(job.window.straggler());  // 2 windows
  run(5);
  CHECK(job.window.straggler());  // the 3rd: flagged within 15 steps
  job.others = 1.0f;  // it recovers
  run(20);
  CHECK(job.window.straggler());  // 4 of the last 5 windows below
  run(5);
  CHECK_FALSE(job.window.straggler());  // all 5: cleared
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
