#pragma once
// CtrAccessor: the rows of a CTR sparse table (SparseTableSpec::Accessor::kCtr): an embedding
// with the show/click statistics that decide which rows to keep (shrink) and to save (base and
// delta saves), each part updated by its own SparseRuleSpec.
//
// A pulled row is `dim` floats: embed_w, then the dim - 1 embedx values. A pushed row is
// push_width = 2 + dim floats: show, click, then the dim gradients. The stored row, one
// contiguous run of floats (after the key, ps/table/row_store.h):
//
//   offset                        field
//   0                             show
//   1                             click
//   2                             unseen_days   (shrinks since the row was last pushed)
//   3                             delta_score   (score pushed since the row was last saved)
//   4                             embed_w
//   5                             embed_rule state    (embed_rule.state_width(1) floats)
//   embedx()                      embedx[dim - 1]
//   embedx() + dim - 1            embedx_rule state   (embedx_rule.state_width(dim - 1) floats)
//   width()                       (the table's flags word follows, ps/table/tables.h)
//
// score = (show - click) * nonclk_coeff + click * click_coeff, of the row's statistics or of one push.

#include <cstddef>
#include <cstdint>

#include "ps/table/sparse_rule.h"

namespace paddle::ps {

struct CtrAccessorSpec {
  float nonclk_coeff = 0.1f, click_coeff = 1.0f;
  float show_click_decay_rate = 0.98f;  // show and click *= this at every shrink
  float delete_threshold = 0.8f;        // shrink deletes rows scoring below
  int delete_after_unseen_days = 30;    // ... and rows unseen for more shrinks than this
  float base_threshold = 1.5f;          // a base save keeps rows scoring at least this
  float delta_threshold = 0.25f;        // a delta save keeps touched rows whose delta_score reaches this
  SparseRuleSpec embed_rule{}, embedx_rule{};  // embed_w (1 value) and embedx (dim - 1 values)
};

class CtrAccessor {
 public:
  static constexpr size_t kShow = 0, kClick = 1, kUnseenDays = 2, kDeltaScore = 3, kEmbedW = 4;

  CtrAccessor(const CtrAccessorSpec& spec, size_t dim);  // throws std::invalid_argument for dim 0

  const CtrAccessorSpec& spec() const { return spec_; }
  size_t width() const { return width_; }  // stored floats per row
  size_t embedx() const { return embedx_; }
  float score(float show, float click) const { return (show - click) * spec_.nonclk_coeff + click * spec_.click_coeff; }
  float score(const float* row) const { return score(row[kShow], row[kClick]); }
  // A new row from its dim initial values (statistics zero, rule state initial).
  void init(float* row, const float* initial) const;
  void pull(const float* row, float* out) const;
  // One pushed row (show, click, grads): statistics added, the rules applied.
  void push(float* row, const float* pushed) const;
  // GEO: statistics added as by a push, the deltas added to the values.
  void add(float* row, const float* delta) const;
  // A shrink's decay of show and click; `unseen` adds a day.
  void decay(float* row, bool unseen) const;
  bool expired(const float* row) const;

 private:
  CtrAccessorSpec spec_;
  size_t dim_, embedx_, embedx_state_, width_;
};

}  // namespace paddle::ps
