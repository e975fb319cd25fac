#pragma once
// Transitional: the two CUDA-only names runtime/distributed/data_parallel.{h,cc} still use (an
// Event in the model's stream and a copy on it), until that file moves to kernels::Event
// (kernels/event.h) and kernels::copy (kernels/elementwise.h) on execution.context(); then this
// header goes. New code includes the family headers and passes a kernels::Context.
// Without CUDA they are unreachable (no CUDA Execution can be made) and throw the one error of
// kernels/context.h if reached.

#include <cstddef>
#include <memory>

#include "kernels/context.h"

#ifdef PADDLE_LAUNCH_WITH_CUDA
#include "kernels/cuda/handles.h"
#include "kernels/elementwise.h"
#else
namespace paddle::kernels::cuda {

class Event {
 public:
  Event() { throw_cuda_not_built("a CUDA event"); }
  void record(Handles&) {}
  void synchronize() {}
};

inline void copy(Handles&, float*, const float*, size_t) { throw_cuda_not_built("a CUDA copy"); }

}  // namespace paddle::kernels::cuda
#endif
