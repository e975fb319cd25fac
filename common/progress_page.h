#pragma once
// ProgressPage: where a training process says what it is doing now, at no system call's cost,
// for its launcher to read without asking it (launcher/supervise/hang_watch.h). The launcher
// names a file in PADDLE_PROGRESS_FILE (LOG_DIR/progress.<role>.<rank>); the process maps it and
// stores into the mapping; the launcher reads it about once a second. Without the variable the
// page is the process's own memory: the marks cost the same and go nowhere.
//
// The page is the file's first 96 bytes: twelve 64-bit words in the machine's byte order, each
// stored whole (an atomic store), so a reader may see one word of the next mark beside one of
// the last, never half a word:
//
//   word 0   magic "PDLPRG01": the process has opened the page (the file exists before that)
//   word 1   marks: one more on every mark below; a reader that sees it move saw the process move
//   word 2   steps completed
//   word 3   the phase (Phase) in the low 32 bits; the kind (CollectiveKind) of the collective in
//            progress, or of the last one, above
//   word 4   collectives entered so far, counting the one in progress: its sequence number
//   word 5   that collective's bytes
//   word 6   when the phase began: CLOCK_MONOTONIC nanoseconds, the clock every process of the
//            machine shares (std::chrono::steady_clock)
//   word 7   when the last mark was made, on the same clock
//   word 8   the last step's seconds (a double's bits)
//   word 9   the last step's busy seconds: not waiting in a collective nor on the servers
//   word 10  this rank's busy seconds per step over the job's median, over the last window of
//            steps (a double's bits; 0: not measured: one rank, or not yet)
//   word 11  the step since which this rank is a straggler (runtime/train/run/straggler_window.h);
//            0 while it is not
//
// A mark reads the clock (the vDSO: no system call) and stores a few words.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/environment.h"

namespace paddle::common {

enum class Phase : uint32_t {
  kStarting = 0,     // before its first step: joining the job, loading data
  kDataLoading = 1,  // waiting for the next batch
  kCompute = 2,      // forward, backward, the optimizer
  kCollective = 3,   // in a collective (its kind, sequence number and bytes beside it)
  kPsPull = 4,       // pulling parameters from the servers
  kPsPush = 5,       // pushing gradients to the servers
  kEvaluation = 6,
  kCheckpointSave = 7,
  kServing = 8,      // a parameter server: waiting for requests is its work
  kFinished = 9,
};

enum class CollectiveKind : uint32_t { kNone = 0, kAllreduce = 1, kBroadcast = 2, kAllgather = 3, kBarrier = 4 };

// "data loading", "allreduce", ...
std::string phase_name(Phase phase);
std::string collective_name(CollectiveKind kind);
// A phase in which the process waits on others: a collective, a pull or a push. Time spent in
// one is not busy time, and CPU time spent in one (a spinning wait) is not progress.
bool waits_on_others(Phase phase);

class ProgressPage {
 public:
  // The page PADDLE_PROGRESS_FILE names, or this process's own when it is unset or empty; with
  // "off" (the launcher watches neither hangs nor stragglers) no mark is made at all. Throws
  // common::Error naming the file when it cannot be mapped.
  static std::unique_ptr<ProgressPage> from_environment(const Environment& env);
  // A page in this process's memory only.
  ProgressPage();
  // The page of the file at `path`, created when missing.
  explicit ProgressPage(const std::string& path);
  ~ProgressPage();
  ProgressPage(const ProgressPage&) = delete;
  ProgressPage& operator=(const ProgressPage&) = delete;

  Phase phase() const { return phase_; }
  uint64_t collectives() const { return collectives_; }
  int64_t steps() const { return steps_; }

  void enter(Phase phase);
  // Enters a collective: the sequence number goes up by one.
  void enter_collective(CollectiveKind kind, uint64_t bytes);
  // Steps begin (again): what came before (an evaluation, a save, the wait for the others after
  // it) is no step's time.
  void begin_steps();
  // A step ended: its seconds (since the last step ended, or steps began) and its busy seconds.
  void step_done();
  double last_busy_seconds() const { return last_busy_seconds_; }
  // This rank's busy seconds per step over the job's median, over the last window, and the step
  // since which it is a straggler (0: it is not).
  void set_straggler(double ratio, int64_t since_step);

  // Restores the phase (and collective) it was entered from when it goes: a collective inside an
  // evaluation returns to the evaluation.
  class Scope {
   public:
    Scope(ProgressPage& page, Phase phase);
    Scope(ProgressPage& page, CollectiveKind kind, uint64_t bytes);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ProgressPage& page_;
    Phase before_;
  };

 private:
  void mark(Phase phase);
  void store(int word, uint64_t value);

  bool marking_ = true;
  uint64_t* words_ = nullptr;  // the mapping, or own_
  std::unique_ptr<uint64_t[]> own_;
  uint64_t marks_ = 0;
  int64_t steps_ = 0;
  uint64_t collectives_ = 0;
  Phase phase_ = Phase::kStarting;
  CollectiveKind collective_kind_ = CollectiveKind::kNone;
  int64_t phase_began_ns_ = 0;
  int64_t step_began_ns_ = 0;
  int64_t waited_in_step_ns_ = 0;  // of the step in progress
  double last_busy_seconds_ = 0;
};

// What a reader sees on a page.
struct ProgressReading {
  uint64_t marks = 0;
  int64_t steps = 0;
  Phase phase = Phase::kStarting;
  CollectiveKind collective = CollectiveKind::kNone;
  uint64_t collectives = 0;
  uint64_t collective_bytes = 0;
  int64_t phase_began_ns = 0, last_mark_ns = 0;
  double step_seconds = 0, busy_seconds = 0;
  double straggler_ratio = 0;
  int64_t straggler_since = 0;  // 0: not a straggler

  // Seconds in the phase, and since the last mark, at `now_ns` (CLOCK_MONOTONIC).
  double seconds_in_phase(int64_t now_ns) const;
  double seconds_since_mark(int64_t now_ns) const;
  // "in allreduce #1,205 (4.2 MB) for 612 s, after step 340", "in data loading for 612 s, ...".
  std::string describe(int64_t now_ns) const;
  // "allreduce #1,205"; empty before its first collective.
  std::string collective_label() const;
};

// The page at `path`; nothing when there is no file or the process has not opened it yet.
std::optional<ProgressReading> read_progress_page(const std::string& path);

// CLOCK_MONOTONIC now, in nanoseconds: the pages' clock.
int64_t monotonic_ns();

}  // namespace paddle::common
