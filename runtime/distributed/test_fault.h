#pragma once
// TestFault: a fault an end-to-end test asks of one rank, so that the launcher's hang and
// straggler detection meet the cases they are for (tests/e2e/test_hang.py). A real job never
// sets it. PADDLE_TEST_FAULT=KIND:RANK:STEP[:SECONDS], RANK being the trainer's (-1: every rank):
//
//   stall_data_loading:R:S     after S steps, rank R sleeps in data loading until it is killed
//   skip_allreduce:R:S         after S steps, rank R returns from its next allreduce without the
//                              others and holds in the collective after it until it is killed:
//                              a stand-in for a backend that would mismatch or deadlock there
//   slow_phases:R:S:SECONDS    from step S on, rank R's evaluations and checkpoint saves each take
//                              SECONDS longer, computing (a long test set, a large model to write)
//
// The fault happens in a job's first generation only (PADDLE_RESTART_COUNT 0 or unset), so that a
// job restarted for it can finish. Bad values are a common::ConfigError naming the variable.

#include <chrono>
#include <cstdint>
#include <memory>

#include "collective/communicator.h"
#include "common/environment.h"
#include "common/progress_page.h"

namespace paddle::runtime {

class TestFault {
 public:
  enum class Kind { kNone, kStallDataLoading, kSkipAllreduce, kSlowPhases };

  TestFault() = default;
  // PADDLE_TEST_FAULT for trainer `rank`; none when unset or meant for another rank.
  static TestFault from_environment(const common::Environment& env, int rank);

  Kind kind() const { return kind_; }
  // In data loading, `steps` done: sleeps until killed when this is the stall's moment.
  void in_data_loading(int64_t steps) const;
  // In an evaluation or a checkpoint save, `steps` done: computes for the slow phases' seconds.
  void in_slow_phase(int64_t steps) const;
  // `inner`, or a communicator that skips and then holds as skip_allreduce says, reading the
  // steps done from `page`.
  std::unique_ptr<collective::Communicator> wrap(std::unique_ptr<collective::Communicator> inner,
                                                 const common::ProgressPage& page) const;

 private:
  Kind kind_ = Kind::kNone;
  int64_t after_steps_ = 0;
  std::chrono::milliseconds slow_{0};
};

}  // namespace paddle::runtime
