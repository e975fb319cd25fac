#pragma once
// OneDnn: what a CPU kernel context owns when the build has oneDNN (Debian's libdnnl): the CPU
// engine and stream every primitive runs on, and the primitives already built, one set per
// shape. Building a oneDNN primitive costs tens of microseconds and a step runs the same shapes
// every time, so each op family's kernels/onednn/<family>.cc keeps what it built here under a key
// naming the op and its shape, and only rebinds the data pointers on later calls.
//
// One OneDnn serves one thread at a time: the cached primitives carry their scratch buffers, so
// callers hold lock() for the whole op (a data-parallel communication thread may share the
// context with the compute thread).
//
// Threads: oneDNN runs on OpenMP, so each primitive uses OMP_NUM_THREADS threads, which the
// launcher sets to cores / local processes.

#include <any>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/layout.h"
#include "kernels/onednn/choice_cache.h"

namespace paddle::kernels::onednn {

// What a kernels::Layout is: the oneDNN memory descriptor of a tensor in that layout.
struct MemoryDesc {
  dnnl::memory::desc desc;
};

// `desc` as a Layout (named by its dims and blocking, as "64x16x28x28 nChw16c").
Layout layout_of(const dnnl::memory::desc& desc);
// The descriptor of a float32 NCHW tensor of `dims` in `layout`, or plain where layout is null.
dnnl::memory::desc desc_of(const dnnl::memory::dims& dims, const Layout* layout);

// Where we keep a kernel of our own beside one of oneDNN's: which runs (context.h's CpuKernels).
enum class Pick { kFaster, kLibrary, kOurs };

// Where oneDNN has an alternative beside its default way to run an op (Winograd's F(4x4, 3x3)
// beside direct convolution, for 3x3 windows of stride 1; its matmul primitive beside sgemm for a
// matrix product), whether the alternative runs. kTimed: the faster of the two, timed per shape
// (per direction for a convolution) at first use under Pick::kFaster, and the default under a
// forced pick, so a forced run times nothing. kNever and kAlways are for tests.
enum class Alternative { kTimed, kNever, kAlways };

class OneDnn {
 public:
  // `choice_cache`: the file that keeps timed choices for later processes (choice_cache.h); ""
  // keeps none.
  explicit OneDnn(Pick pick = Pick::kFaster, Alternative alternative = Alternative::kTimed,
                  std::string choice_cache = "");

  Pick pick() const { return pick_; }
  Alternative alternative() const { return alternative_; }
  // Whether a choice between oneDNN's default and its alternative is timed (else: as told).
  bool times_alternatives() const { return alternative_ == Alternative::kTimed && pick_ == Pick::kFaster; }
  // Which of `ways` runs `what` (an op and its shape, which is also its key in the choice cache):
  // the one kept for this machine, or the one `time` decides (and the cache keeps). Noted in
  // choices() as "<what>: <words>, timed here", or "..., as timed before (<cache file>)"; under
  // lock().
  size_t decide(const std::string& what, size_t ways, const std::function<Decision()>& time);
  std::vector<std::string> choices() {
    auto held = lock();
    return choices_;
  }

  const dnnl::engine& engine() const { return engine_; }
  dnnl::stream& stream() { return stream_; }
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }

  // The entry cached under `key`, built by `build` on first use. T must be the same type for
  // every use of one key.
  template <class T>
  T& cached(const std::string& key, const std::function<T()>& build) {
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, std::make_shared<T>(build())).first;
    return *std::any_cast<std::shared_ptr<T>&>(it->second);
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::mutex mutex_;
  std::map<std::string, std::any> cache_;
  Pick pick_;
  Alternative alternative_;
  ChoiceCache kept_choices_;
  std::vector<std::string> choices_;
};

// One of an op's buffers in the caller's layout (plain, or a blocked one the caller holds), as
// the primitive wants it: oneDNN may choose another layout (nChw16c, say) for a shape, in which
// case the bridge owns a scratch buffer in that layout and reorders between it and the caller's
// data. A gradient the op adds into
// (kAccumulate) always goes through scratch, since primitives overwrite their outputs.
class LayoutBridge {
 public:
  enum class Use { kRead, kWrite, kAccumulate };

  LayoutBridge() = default;
  LayoutBridge(const dnnl::memory::desc& caller, const dnnl::memory::desc& chosen, const dnnl::engine& engine, Use use);

  // Points the bridge at the caller's buffer and returns the memory to hand the primitive.
  dnnl::memory& bind(const void* data);
  // Before the primitive: a kRead buffer is reordered into scratch where the layouts differ.
  void before(dnnl::stream& stream);
  // After it: a kWrite result is reordered out of scratch, a kAccumulate one added into the caller's.
  void after(dnnl::stream& stream);

 private:
  Use use_ = Use::kRead;
  bool through_scratch_ = false;
  dnnl::memory caller_, scratch_;
  dnnl::reorder reorder_;
};

// `make()`, or nothing where oneDNN has no such primitive for the shape on this CPU (Winograd's
// convolution outside 3x3 windows of stride 1, or without AVX-512, say).
template <class Desc>
std::optional<Desc> if_implemented(const std::function<Desc()>& make) {
  try {
    return make();
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_unimplemented) return std::nullopt;
    throw;
  }
}

// One operand of a primitive: its oneDNN argument (DNNL_ARG_SRC, ...), bridge and caller's buffer.
struct Operand {
  int arg;
  LayoutBridge& bridge;
  const void* data;
};

// Runs `op` on the stream and waits for it: inputs reordered in first, the output reordered (or
// added) out after.
void execute(OneDnn& dnn, const dnnl::primitive& op, std::initializer_list<Operand> inputs, const Operand& output);

}  // namespace paddle::kernels::onednn
