#include "ps/row_store.h"

#include <algorithm>
#include <stdexcept>

namespace paddle::ps {

RowStore::RowStore(size_t width) : width_(width), stride_(width + 2) { rehash(16); }

uint64_t RowStore::arena_bytes() const {
  if (chunks_.empty()) return 0;
  return ((chunks_.size() - 1) * kChunkRows + last_chunk_rows_) * stride_ * sizeof(float) +
         chunks_.capacity() * sizeof(chunks_[0]);
}

void RowStore::grow_arena() {
  const size_t in_full_chunks = chunks_.empty() ? 0 : (chunks_.size() - 1) * kChunkRows;
  if (!chunks_.empty() && size_ < in_full_chunks + last_chunk_rows_) return;
  if (chunks_.empty() || last_chunk_rows_ == kChunkRows) {
    last_chunk_rows_ = kFirstChunkRows;
    chunks_.push_back(std::make_unique<float[]>(last_chunk_rows_ * stride_));
    return;
  }
  const size_t rows = std::min(last_chunk_rows_ * 2, kChunkRows);
  auto bigger = std::make_unique<float[]>(rows * stride_);
  std::copy_n(chunks_.back().get(), last_chunk_rows_ * stride_, bigger.get());
  chunks_.back() = std::move(bigger);
  last_chunk_rows_ = rows;
}

float* RowStore::insert(uint64_t key, bool& added) {
  if (size_ >= UINT32_MAX - 1) throw std::length_error("a sparse table shard holds at most 2^32 - 2 rows");
  if ((size_ + 1) * 4 >= slots_.size() * 3) rehash(slots_.size() * 2);
  const uint32_t tag = static_cast<uint32_t>(mix(key));
  for (size_t i = tag & mask_;; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.row_plus_one == 0) {
      grow_arena();
      s = Slot{tag, static_cast<uint32_t>(size_ + 1)};
      float* w = words(size_);
      std::memcpy(w, &key, sizeof key);
      std::fill_n(w + 2, width_, 0.0f);
      ++size_;
      added = true;
      return w + 2;
    }
    if (s.tag == tag && key_at(s.row_plus_one - 1) == key) {
      added = false;
      return at(s.row_plus_one - 1);
    }
  }
}

size_t RowStore::slot_of(uint64_t key) const {
  const uint32_t tag = static_cast<uint32_t>(mix(key));
  size_t i = tag & mask_;
  while (slots_[i].row_plus_one == 0 || slots_[i].tag != tag || key_at(slots_[i].row_plus_one - 1) != key)
    i = (i + 1) & mask_;
  return i;
}

void RowStore::erase(size_t row) {
  size_t hole = slot_of(key_at(row));
  // Shift the probe chain after the hole back: a slot moves into the hole unless its home lies
  // cyclically in (hole, slot].
  for (size_t j = (hole + 1) & mask_; slots_[j].row_plus_one != 0; j = (j + 1) & mask_) {
    const size_t home = slots_[j].tag & mask_;
    if (((j - home) & mask_) >= ((j - hole) & mask_)) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = Slot{0, 0};
  const size_t last = size_ - 1;
  if (row != last) {
    slots_[slot_of(key_at(last))].row_plus_one = static_cast<uint32_t>(row + 1);
    std::copy_n(words(last), stride_, words(row));
  }
  --size_;
  if (size_ <= (chunks_.size() - 1) * kChunkRows && chunks_.size() > 1) {
    chunks_.pop_back();
    last_chunk_rows_ = kChunkRows;
  }
}

void RowStore::erase_key(uint64_t key) {
  if (find(key) != nullptr) erase(slots_[slot_of(key)].row_plus_one - 1);
}

void RowStore::clear() {
  if (size_ * 4 >= slots_.size()) {
    std::fill(slots_.begin(), slots_.end(), Slot{0, 0});
  } else {  // few rows in a big index: find all their slots first, since emptying one cuts probe chains
    std::vector<size_t> used(size_);
    for (size_t r = 0; r < size_; ++r) used[r] = slot_of(key_at(r));
    for (size_t slot : used) slots_[slot] = Slot{0, 0};
  }
  size_ = 0;
  if (chunks_.size() > 1) {
    chunks_.resize(1);
    last_chunk_rows_ = kChunkRows;
  }
}

void RowStore::rehash(size_t capacity) {
  std::vector<Slot> old(capacity, Slot{0, 0});
  old.swap(slots_);
  mask_ = capacity - 1;
  for (const Slot& s : old) {
    if (s.row_plus_one == 0) continue;
    size_t i = s.tag & mask_;
    while (slots_[i].row_plus_one != 0) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

}  // namespace paddle::ps
