#include "kernels/event.h"

#ifdef PADDLE_LAUNCH_WITH_CUDA
#include "kernels/cuda/handles.h"
#endif

namespace paddle::kernels {

#ifdef PADDLE_LAUNCH_WITH_CUDA

Event::Event(const Context& ctx) : ctx_(ctx) {
  if (ctx.is_cuda()) event_ = std::make_unique<cuda::Event>();
}

Event::~Event() = default;

void Event::record() {
  if (event_) event_->record(ctx_.cuda());
}

void Event::synchronize() {
  if (event_) event_->synchronize();
}

#else

Event::Event(const Context&) {}
Event::~Event() = default;
void Event::record() {}
void Event::synchronize() {}

#endif

}  // namespace paddle::kernels
