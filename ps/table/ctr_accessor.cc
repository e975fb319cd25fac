#include "ps/table/ctr_accessor.h"

#include <algorithm>
#include <stdexcept>

namespace paddle::ps {

CtrAccessor::CtrAccessor(const CtrAccessorSpec& spec, size_t dim) : spec_(spec), dim_(dim) {
  if (dim == 0) throw std::invalid_argument("a CTR table needs dim >= 1 (embed_w, then embedx)");
  embedx_ = kEmbedW + 1 + spec_.embed_rule.state_width(1);
  embedx_state_ = embedx_ + dim_ - 1;
  width_ = embedx_state_ + spec_.embedx_rule.state_width(dim_ - 1);
}

void CtrAccessor::init(float* row, const float* initial) const {
  std::fill_n(row, kEmbedW, 0.0f);
  row[kEmbedW] = initial[0];
  spec_.embed_rule.init_state(row + kEmbedW + 1, 1);
  std::copy_n(initial + 1, dim_ - 1, row + embedx_);
  spec_.embedx_rule.init_state(row + embedx_state_, dim_ - 1);
}

void CtrAccessor::pull(const float* row, float* out) const {
  out[0] = row[kEmbedW];
  std::copy_n(row + embedx_, dim_ - 1, out + 1);
}

void CtrAccessor::push(float* row, const float* pushed) const {
  row[kShow] += pushed[0];
  row[kClick] += pushed[1];
  row[kDeltaScore] += score(pushed[0], pushed[1]);
  row[kUnseenDays] = 0;
  spec_.embed_rule.apply(row + kEmbedW, row + kEmbedW + 1, pushed + 2, 1);
  if (dim_ > 1) spec_.embedx_rule.apply(row + embedx_, row + embedx_state_, pushed + 3, dim_ - 1);
}

void CtrAccessor::add(float* row, const float* delta) const {
  row[kShow] += delta[0];
  row[kClick] += delta[1];
  row[kDeltaScore] += score(delta[0], delta[1]);
  row[kUnseenDays] = 0;
  row[kEmbedW] += delta[2];
  for (size_t i = 1; i < dim_; ++i) row[embedx_ + i - 1] += delta[2 + i];
}

void CtrAccessor::decay(float* row, bool unseen) const {
  row[kShow] *= spec_.show_click_decay_rate;
  row[kClick] *= spec_.show_click_decay_rate;
  if (unseen) row[kUnseenDays] += 1;
}

bool CtrAccessor::expired(const float* row) const {
  return score(row) < spec_.delete_threshold || row[kUnseenDays] > static_cast<float>(spec_.delete_after_unseen_days);
}

}  // namespace paddle::ps
