#include <fmt/format.h>

#include "kernels/blocked.h"
#include "kernels/onednn/onednn.h"

namespace paddle::kernels::onednn {
namespace {

// y = x, from one layout of the same dims to another; the reorder is cached per pair.
void reorder(OneDnn& dnn, const dnnl::memory::desc& from, const float* x, const dnnl::memory::desc& to, float* y,
             const std::string& key) {
  auto held = dnn.lock();
  auto& op = dnn.cached<dnnl::reorder>(key, [&] {
    return dnnl::reorder(dnnl::reorder::primitive_desc(dnn.engine(), from, dnn.engine(), to));
  });
  dnnl::memory source(from, dnn.engine(), const_cast<float*>(x)), target(to, dnn.engine(), y);
  op.execute(dnn.stream(), source, target);
  dnn.stream().wait();
}

}  // namespace

void to_plain(OneDnn& dnn, const Layout& layout, const float* x, float* y) {
  const dnnl::memory::desc& blocked = layout.desc().desc;
  reorder(dnn, blocked, x, desc_of(blocked.dims(), nullptr), y, "to plain from " + layout.name());
}

void from_plain(OneDnn& dnn, const Layout& layout, const float* x, float* y) {
  const dnnl::memory::desc& blocked = layout.desc().desc;
  reorder(dnn, desc_of(blocked.dims(), nullptr), x, blocked, y, "from plain to " + layout.name());
}

}  // namespace paddle::kernels::onednn
