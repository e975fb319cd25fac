#pragma once
// ShmReduceBuffer: ShmCommunicator's ReduceBuffer (collective/communicator.h). Every rank's
// buffer is a shared-memory segment of its own that every rank of the node maps, so the
// reduction reads the peers' values where they were written:
//
//   step 1  every rank has written its buffer;
//   reduce  rank r sums share r of every rank's buffer, in rank order, scaled for a mean, into
//           share r of its own buffer (shares are cut as ShmCommunicator cuts a chunk);
//   step 2  every share is reduced;
//   gather  rank r copies share q of rank q's buffer into its own, for every other q;
//   step 3  nobody reads another rank's buffer any more, so each may write its own again.
//
// Per reduced byte, with 2 ranks, a rank reads 1.5 bytes and writes 1 (a mean costs nothing more);
// Communicator::allreduce, copying through the communicator's slots, reads 2 and writes 1.5, and
// a mean adds a pass over the result. The sums are the ones ShmCommunicator::allreduce computes,
// so the results are bit-identical to it. Segments are named after the communicator's own
// (ShmSegment), with the buffer's number and the rank, and unlinked once every rank has mapped
// them.

#include <cstddef>
#include <memory>
#include <vector>

#include "collective/communicator.h"
#include "collective/shm_lockstep.h"
#include "collective/shm_segment.h"

namespace paddle::collective {

class ShmReduceBuffer : public ReduceBuffer {
 public:
  // Made by ShmCommunicator::reduce_buffer: `segments` holds every rank's buffer of `count`
  // floats, mapped, by rank.
  ShmReduceBuffer(ShmLockstep& comm, size_t count, std::vector<std::unique_ptr<ShmSegment>> segments);

  float* data() override { return buffer(rank_); }
  size_t size() const override { return count_; }
  void allreduce(ReduceOp op) override;

 private:
  float* buffer(int rank) const { return static_cast<float*>(segments_[static_cast<size_t>(rank)]->data()); }
  size_t share_begin(int rank) const;

  ShmLockstep& comm_;
  int rank_, size_;
  size_t count_, share_;
  std::vector<std::unique_ptr<ShmSegment>> segments_;  // every rank's buffer, by rank
};

}  // namespace paddle::collective
