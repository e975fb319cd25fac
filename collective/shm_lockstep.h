#pragma once
// ShmLockstep: what a shared-memory reduce buffer (shm_reduce_buffer.h) needs of its
// communicator (shm_communicator.h): the ranks' lockstep, and the name of the operation under
// way for a failure's message. The communicator implements it; the buffer sees nothing else,
// so the two files include each other no more.

#include <cstddef>

namespace paddle::collective {

class ShmLockstep {
 public:
  virtual ~ShmLockstep() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Throws CollectiveError when an earlier collective broke the communicator; otherwise names
  // `what` (of `count` floats) as the operation under way.
  virtual void begin(const char* what, size_t count) = 0;
  // Arrives with this rank's writes and waits for every rank; throws CollectiveError naming the
  // ranks that never came.
  virtual void step() = 0;
};

}  // namespace paddle::collective
