#pragma once
// KeyIndex: numbers distinct 64-bit keys in the order they are first seen (0, 1, 2, ...): a
// batch's distinct sparse keys, or the rows of several steps merged per key.
//
//   KeyIndex index;
//   for (uint64_t key : batch) slot.push_back(index.insert(key));   // the same number for a repeat
//   pull(index.keys());                                             // each key once, in first-seen order
//   index.clear();                                                  // keeps its memory for the next batch
//
// Open addressing with linear probing in a power-of-two table kept at most half full. A worker
// indexes every step, so clear() keeps the memory: after the first batches nothing is allocated.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace paddle::ps {

class KeyIndex {
 public:
  // The key's number: the one it was given before, or size() (then the key is added).
  uint32_t insert(uint64_t key) {
    if (2 * (keys_.size() + 1) > slots_.size()) grow();
    for (size_t at = home(key);; at = (at + 1) & mask_) {
      const uint32_t slot = slots_[at];
      if (slot == 0) {
        keys_.push_back(key);
        slots_[at] = static_cast<uint32_t>(keys_.size());
        return slots_[at] - 1;
      }
      if (keys_[slot - 1] == key) return slot - 1;
    }
  }
  // The distinct keys, by number.
  const std::vector<uint64_t>& keys() const { return keys_; }
  size_t size() const { return keys_.size(); }
  void clear();

 private:
  // Fibonacci hashing: small consecutive keys (decimal feasigns) spread as well as hashed ones.
  size_t home(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_); }
  void grow();

  std::vector<uint32_t> slots_;  // a key's number + 1; 0: empty
  std::vector<uint64_t> keys_;
  size_t mask_ = 0;
  int shift_ = 64;
};

}  // namespace paddle::ps
