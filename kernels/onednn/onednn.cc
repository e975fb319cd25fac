#include "kernels/onednn/onednn.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <numeric>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace paddle::kernels::onednn {
namespace {

// "nChw16c" for a blocked descriptor: the outer dims from the largest stride down, a dim in
// capitals where it is also blocked, then the inner blocks.
std::string blocking_name(const dnnl_memory_desc_t& d) {
  if (d.format_kind != dnnl_blocked) return "opaque";
  const auto& blocking = d.format_desc.blocking;
  const char* letters = d.ndims == 4 ? "nchw" : "abcdef";
  std::vector<int> order(static_cast<size_t>(d.ndims));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return blocking.strides[a] > blocking.strides[b]; });
  std::string name;
  for (int dim : order) {
    const bool blocked = std::find(blocking.inner_idxs, blocking.inner_idxs + blocking.inner_nblks, dim) !=
                         blocking.inner_idxs + blocking.inner_nblks;
    name += blocked ? static_cast<char>(std::toupper(letters[dim])) : letters[dim];
  }
  for (int i = 0; i < blocking.inner_nblks; ++i)
    name += fmt::format("{}{}", blocking.inner_blks[i], letters[blocking.inner_idxs[i]]);
  return name;
}

}  // namespace

Layout layout_of(const dnnl::memory::desc& desc) {
  const dnnl_memory_desc_t& d = desc.data;
  std::string dims;
  for (int i = 0; i < d.ndims; ++i) dims += fmt::format("{}{}", i ? "x" : "", d.dims[i]);
  return Layout(std::make_shared<MemoryDesc>(MemoryDesc{desc}), desc.get_size(), dims + " " + blocking_name(d));
}

dnnl::memory::desc desc_of(const dnnl::memory::dims& dims, const Layout* layout) {
  if (layout == nullptr) return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nchw);
  if (layout->desc().desc.dims() != dims)
    throw std::logic_error(fmt::format("a tensor in layout {} used as one of other dims", layout->name()));
  return layout->desc().desc;
}

OneDnn::OneDnn(Pick pick, Alternative alternative, std::string choice_cache)
    : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), pick_(pick), alternative_(alternative),
      kept_choices_(std::move(choice_cache)) {}

size_t OneDnn::decide(const std::string& what, size_t ways, const std::function<Decision()>& time) {
  const Decision decision = kept_choices_.decide(what, ways, time);
  choices_.push_back(decision.from_cache
                         ? fmt::format("{}: {}, as timed before ({})", what, decision.words, kept_choices_.path())
                         : fmt::format("{}: {}, timed here", what, decision.words));
  return decision.index;
}

LayoutBridge::LayoutBridge(const dnnl::memory::desc& caller, const dnnl::memory::desc& chosen,
                           const dnnl::engine& engine, Use use)
    : use_(use), through_scratch_(use == Use::kAccumulate || caller != chosen), caller_(caller, engine, nullptr) {
  if (!through_scratch_) return;
  scratch_ = dnnl::memory(chosen, engine);
  if (use == Use::kRead) {
    reorder_ = dnnl::reorder(caller_, scratch_);
    return;
  }
  dnnl::primitive_attr attr;
  if (use == Use::kAccumulate) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attr.set_post_ops(sum);
  }
  reorder_ = dnnl::reorder(scratch_, caller_, attr);
}

dnnl::memory& LayoutBridge::bind(const void* data) {
  caller_.set_data_handle(const_cast<void*>(data));
  return through_scratch_ ? scratch_ : caller_;
}

void LayoutBridge::before(dnnl::stream& stream) {
  if (through_scratch_ && use_ == Use::kRead) reorder_.execute(stream, caller_, scratch_);
}

void LayoutBridge::after(dnnl::stream& stream) {
  if (through_scratch_ && use_ != Use::kRead) reorder_.execute(stream, scratch_, caller_);
}

void execute(OneDnn& dnn, const dnnl::primitive& op, std::initializer_list<Operand> inputs, const Operand& output) {
  std::unordered_map<int, dnnl::memory> args;
  for (const Operand& in : inputs) {
    args.emplace(in.arg, in.bridge.bind(in.data));
    in.bridge.before(dnn.stream());
  }
  args.emplace(output.arg, output.bridge.bind(output.data));
  op.execute(dnn.stream(), args);
  output.bridge.after(dnn.stream());
  dnn.stream().wait();
}

}  // namespace paddle::kernels::onednn
