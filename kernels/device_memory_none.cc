// Device memory in a build without CUDA: no CUDA Execution can be made, so no tensor is ever on
// a device; a request that still arrives meets the error of kernels/context.h.

#include <string>

#include "kernels/context.h"
#include "kernels/device_memory.h"

namespace paddle::kernels {

void* cuda_allocate(size_t, int device) { throw_cuda_not_built(("memory on gpu:" + std::to_string(device)).c_str()); }
void cuda_release(void*) noexcept {}
void cuda_copy(void*, const void*, size_t, CopyKind) { throw_cuda_not_built("a copy to or from a CUDA device"); }
void cuda_zero(void*, size_t) { throw_cuda_not_built("zeroing CUDA memory"); }

}  // namespace paddle::kernels
