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
// ranges (empty = 0); a categorical value becomes hash(slot index, text) % hash_dim. PATH is a
// file or a directory of files (read in name order). Throws common::DataError naming file and line.
CtrDataset load_criteo_raw(const std::string& path, uint64_t hash_dim);

// PaddleRec slot format: `click:0|1`, 13 `dense_feature:x`, then `1:id` .. `26:id`; a key is
// hash(slot, id) % hash_dim.
CtrDataset load_criteo_slot(const std::string& path, uint64_t hash_dim);

// The hash of (slot, text) used for keys: 64-bit FNV-1a.
uint64_t slot_hash(int slot, const std::string& text);

}  // namespace paddle::runtime
