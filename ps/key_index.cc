#include "ps/key_index.h"

#include <algorithm>

namespace paddle::ps {

void KeyIndex::clear() {
  std::fill(slots_.begin(), slots_.end(), 0u);
  keys_.clear();
}

void KeyIndex::grow() {
  const size_t capacity = std::max<size_t>(1024, 2 * slots_.size());
  slots_.assign(capacity, 0u);
  mask_ = capacity - 1;
  shift_ = 64 - __builtin_ctzll(capacity);
  for (size_t n = 0; n < keys_.size(); ++n) {
    size_t at = home(keys_[n]);
    while (slots_[at] != 0) at = (at + 1) & mask_;
    slots_[at] = static_cast<uint32_t>(n + 1);
  }
}

}  // namespace paddle::ps
