#pragma once
// Event: a point in a context's queue of kernels that another thread can wait for (a bucket of
// gradients complete, say). On the CPU kernels have run by the time they return, so recording
// and waiting do nothing.

#include <memory>

#include "kernels/context.h"

namespace paddle::kernels {

namespace cuda {
class Event;
}

class Event {
 public:
  // `ctx` must outlive the event.
  explicit Event(const Context& ctx);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  // Marks everything queued on the context so far.
  void record();
  // Waits until the recorded point is reached.
  void synchronize();

 private:
#ifdef PADDLE_LAUNCH_WITH_CUDA
  const Context& ctx_;
  std::unique_ptr<cuda::Event> event_;  // null on the CPU
#endif
};

}  // namespace paddle::kernels
