#pragma once
// ShmCommunicator: the collectives among ranks of one node, through one shared-memory segment
// (shm_segment.h) instead of sockets.
//
// The segment holds, per rank, an arrival counter and its pid, then two halves of one slot per
// rank. Every operation is a sequence of steps: each rank writes into its own slot of the next
// half, arrives, waits until every rank has arrived, then reads any rank's slot of that half.
// Alternating halves means a step's writes never meet the previous step's reads, so one wait
// per step is all the synchronization there is.
//
//   - allreduce, small messages: every rank writes its whole buffer, then sums all slots;
//   - allreduce, larger ones: chunks of one slot, each split into one share per rank. A step
//     carries a chunk's shares to the ranks that own them and the previous chunk's reduced
//     shares back, so every rank reduces its share (all cores work) and a chunk costs one step;
//   - broadcast and allgather: chunks written by the root (every rank), read by the others.
// Sums run in rank order (x0 + x1 + ...) wherever they are computed, so every rank ends with
// bit-identical values and the result does not depend on timing. The mean is the sum times
// 1/size, as in GlooCommunicator.
//
// Waiting spins briefly, then yields, then sleeps on a futex in the segment, so ranks that share
// fewer cores than they are do not starve each other. A wait ends with CollectiveError after the
// timeout, or at once when a peer's process exits, naming the operation and the ranks missing;
// the communicator is then unusable.

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collective/communicator.h"
#include "collective/shm_lockstep.h"
#include "collective/shm_segment.h"

namespace paddle::collective {

struct ShmOptions {
  std::string key_prefix = "shm";  // the group's store keys
  std::string job_id = "default";  // PADDLE_JOB_ID: names the segment
  long generation = 0;             // PADDLE_RESTART_COUNT: names the segment
  std::chrono::milliseconds timeout{300000};
  size_t slot_bytes = 256 << 10;   // per rank and half; the chunk size of large messages
  std::vector<int> names;          // the job's rank of each member, for messages (default: 0..size-1)
};

class ShmCommunicator : public Communicator, private ShmLockstep {
 public:

  // `rank` of `size` ranks on this node, meeting through `store`. Returns once all have mapped
  // the segment; throws CollectiveError.
  ShmCommunicator(int rank, int size, gloo::rendezvous::Store& store, const ShmOptions& options,
                  Diagnosis diagnose = {});
  ~ShmCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "shm"; }

  void allreduce(float* data, size_t count, ReduceOp op) override;
  void broadcast(float* data, size_t count, int root) override;
  void allgather(const float* input, float* output, size_t count) override;
  void barrier() override;
  // ShmReduceBuffer (collective/shm_reduce_buffer.h); null for one rank, which has nothing to
  // reduce. Throws CollectiveError on every rank when one cannot make or map its segment.
  std::unique_ptr<ReduceBuffer> reduce_buffer(size_t count) override;

  // The shared-memory name this communicator used (unlinked by now).
  const std::string& segment_name() const { return segment_->name(); }

 private:
  struct Layout;
  void allreduce_small(float* data, size_t count);
  void allreduce_chunked(float* data, size_t count);
  void reduce_share(float* local, float* out, size_t offset, size_t length) const;

  // ShmLockstep, for its reduce buffers. One step: arrive with this rank's writes to the next
  // half, wait for every rank.
  void begin(const char* what, size_t count) override;
  void step() override;
  // A step of a set-up that may fail on some ranks: `why` is this rank's failure, or empty. Throws
  // CollectiveError on every rank when one failed (this rank's `why`, or the failed ranks and
  // `what_failed`); the communicator stays usable.
  void agree(const std::string& why, const std::string& what_failed);
  bool all_arrived(uint64_t epoch) const;
  void wait_slowly(uint64_t epoch);
  std::vector<int> missing(uint64_t epoch) const;
  std::vector<int> exited() const;
  [[noreturn]] void fail(const std::string& why);
  void check_usable() const;

  float* slot(int half, int member) const;
  int next_half() const { return static_cast<int>((epoch_ + 1) & 1); }
  int this_half() const { return static_cast<int>(epoch_ & 1); }

  int rank_;
  int size_;
  ShmOptions options_;
  Diagnosis diagnose_;
  size_t slot_floats_;
  std::unique_ptr<ShmSegment> segment_;
  std::unique_ptr<Layout> layout_;
  std::vector<int> peer_pidfds_;  // -1 for this process and where pidfd_open is unavailable
  uint64_t epoch_ = 0;
  size_t reduce_buffers_ = 0;  // made so far: the next one's number
  struct Operation {
    const char* name;
    size_t count;  // floats; 0 when none
    int root;      // -1 when none
  };
  Operation operation_{"set-up", 0, -1};  // the one under way, for messages (named only on failure)
  std::string broken_;     // why the communicator is unusable; empty while it works
};

}  // namespace paddle::collective
