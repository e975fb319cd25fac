#pragma once
// Click-through-rate data in memory: per sample a 0/1 label, 13 dense features and 26 sparse
// keys, read from raw Criteo text or PaddleRec's slot format.

#include <cstdint>
#include <string>
#include <vector>

namespace paddle::runtime {

inline constexpr int kCriteoDense = 13;
inline constexpr int kCriteoSlots = 26;

struct CtrDataset {
  std::vector<float> labels;     // n
  std::vector<float> dense;      // n x 13
  std::vector<uint64_t> sparse;  // n x 26
  size_t size() const { return labels.size(); }
  // The samples from `begin` on, removed from this set (a train/test split).
  CtrDataset split_off(size_t begin);
};

// Raw Criteo: `label TAB 13 integers TAB 26 hex strings`, empty fields allowed. Dense features
// are scaled as PaddleFleetX's reader does, (x - min) / (max - min) with its fixed per-feature
// ranges (empty = 0); a categorical value becomes its 64-bit feature sign, slot_hash(slot index,
// text). PATH is a file or a directory of files (read in name order). Throws common::DataError
// naming file and line.
//
// `fold_into` > 0 (the config's explicit ctr.hash_dim) folds every sign into [0, fold_into), as
// hashed-vocabulary models do; distinct values then share rows. 0 keeps the signs whole.
CtrDataset load_criteo_raw(const std::string& path, uint64_t fold_into = 0);

// PaddleRec slot format: `click:0|1`, 13 `dense_feature:x`, then `1:id` .. `26:id`. An id that
// is a decimal uint64 is a feasign already and passes through unchanged (Paddle's slot files
// carry them so); any other id becomes slot_hash(slot, id). `fold_into` as above.
CtrDataset load_criteo_slot(const std::string& path, uint64_t fold_into = 0);

// The 64-bit feature sign of a categorical value: FNV-1a of "slot:text", so the same text in two
// slots gives two signs.
uint64_t slot_hash(int slot, const std::string& text);

}  // namespace paddle::runtime
