#pragma once
// WorkerProgress: where a parameter-server worker is in its run, kept so that its launcher can
// restart it alone (paddle-launch --ps_worker_restarts) while the servers keep their tables and
// the other workers train on.
//
// The mark says the round (an epoch, or an online pass), how many of the round's batches the servers have acknowledged (sync:
// after their barrier; async: after the communicator's send; GEO: after the window's deltas),
// the global step that makes, and the barriers the job had completed then. It is 56 bytes
// rewritten in place after every step (one pwrite, no sync: a killed process's write is in the
// page cache; a machine that dies takes the worker's restart with it), the file the launcher
// names in PADDLE_PS_WORKER_PROGRESS, a worker's own:
//
//   offset 0   u32 magic "PWPM", u32 CRC-32 of bytes 8..56
//   offset 8   i64 round, i64 batch (acknowledged, of the round), i64 step, u64 barriers completed,
//              u32 round_trained (the round's training is over: what follows are the round's end
//              and evaluation), u32 barrier_per_step (sync), u32 flags (bit 0: this worker's
//              evaluation counts are on the servers; bit 1: worker 0 has zeroed them again;
//              bit 2: the worker has finished, its STOP_WORKER answered), u32 reserved
//
// A restarted worker (PADDLE_PS_WORKER_RESTART_COUNT > 0) asks every server to REJOIN, which
// says how many barriers the job has completed, and resume_point() decides where it takes up: at
// the mark, with the barriers the job completed since then (those of its round's end, which its
// dead self had reached) passed over rather than waited at again.

#include <cstdint>
#include <filesystem>
#include <optional>

#include "common/environment.h"
#include "common/error.h"

namespace paddle::runtime {

struct WorkerMark {
  int64_t round = 0;   // the round (an epoch or online pass) it is in
  int64_t batch = 0;   // of the round, acknowledged by the servers
  int64_t step = 0;    // global, counting the acknowledged batches
  uint64_t barriers = 0;
  bool round_trained = false;
  bool barrier_per_step = false;
  bool counted = false;  // this round's evaluation counts were added on the servers
  bool zeroed = false;   // worker 0 has set them back to zero after reading them
  bool finished = false;  // the servers have its STOP_WORKER: a restart has nothing left to do
  bool operator==(const WorkerMark&) const = default;
};

// A worker restarted in place that cannot take up where it was (it died where the job has
// moved past it without its part). Exit status 75 (EX_TEMPFAIL): paddle-launch stops restarting
// it alone and restarts the whole job, from the last save, within --max_restarts.
class CannotRejoin : public common::Error {
 public:
  explicit CannotRejoin(const std::string& message) : Error(message, common::kExitCannotRejoin) {}
};

class WorkerProgress {
 public:
  // The file of PADDLE_PS_WORKER_PROGRESS and the restarts of PADDLE_PS_WORKER_RESTART_COUNT;
  // nothing without the file (a launcher that does not restart workers in place).
  static std::optional<WorkerProgress> from_environment(const common::Environment& env);
  // Opens (creating) `file`; throws common::DataError naming it when it cannot.
  WorkerProgress(std::filesystem::path file, int restarts);
  ~WorkerProgress();
  WorkerProgress(WorkerProgress&& other) noexcept;
  WorkerProgress& operator=(WorkerProgress&&) = delete;
  WorkerProgress(const WorkerProgress&) = delete;

  // The restarts in place before this run: 0 for a worker's first start.
  int restarts() const { return restarts_; }
  // The last mark recorded, by this run or a dead one; nothing when none was, or the bytes are
  // not a whole mark.
  std::optional<WorkerMark> last() const;
  // Throws common::DataError naming the file when the write fails.
  void record(const WorkerMark& mark);

 private:
  std::filesystem::path file_;
  int fd_ = -1;
  int restarts_ = 0;
};

// At most this many barriers follow a round's training: two around a shrink, three in an evaluation.
inline constexpr uint64_t kMostBarriersAfterRound = 5;

// Where a restarted worker takes up, from its last mark and the barriers the job had completed
// when it rejoined: nothing to start from the beginning (it died before the first barrier, the
// one after the dense values are written, and so did the job); without a mark but past that
// barrier, at `first_round`'s first batch. A mark after a round's training comes back as it is:
// the barriers completed since (up to kMostBarriersAfterRound) are the round end's, to pass over.
// Throws CannotRejoin, saying why, when the job has passed barriers the mark cannot account for.
std::optional<WorkerMark> resume_point(const std::optional<WorkerMark>& last, uint64_t barriers_completed,
                                       int64_t first_round);

}  // namespace paddle::runtime
