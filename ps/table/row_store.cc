#include "ps/table/row_store.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace paddle::ps {

RowStore::RowStore(size_t width)
    : width_(width), stride_(width + 2),
      chunks_per_slab_(std::max<size_t>(1, MappedMemory::kHugePage / (kChunkRows * stride_ * sizeof(float)))) {
  rehash(16);
}

size_t RowStore::slab_bytes() const {
  const size_t chunk_bytes = kChunkRows * stride_ * sizeof(float);
  return (chunks_per_slab_ * chunk_bytes + MappedMemory::kHugePage - 1) / MappedMemory::kHugePage * MappedMemory::kHugePage;
}

bool RowStore::rows_fill_slab() const {
  const size_t used = chunks_per_slab_ * kChunkRows * stride_ * sizeof(float);
  return used * 10 >= slab_bytes() * 9;  // rows of 2 MiB and more waste
}

bool RowStore::advised(size_t slab) const { return 1 + slab * chunks_per_slab_ >= kHugePageChunks && rows_fill_slab(); }

size_t RowStore::capacity_rows() const {
  return chunks_.size() <= 1 ? first_chunk_rows_ : chunks_.size() * kChunkRows;
}

uint64_t RowStore::arena_bytes() const {
  const size_t chunk_bytes = kChunkRows * stride_ * sizeof(float);
  uint64_t bytes = first_chunk_rows_ * stride_ * sizeof(float) + chunks_.capacity() * sizeof(float*);
  for (size_t s = 0; s < slabs_.size(); ++s) {
    // An advised or collapsed (full) slab is backed whole by huge pages; another only where its
    // rows were touched.
    if (advised(s) || (s + 1 < slabs_.size() && rows_fill_slab())) {
      bytes += slabs_[s].bytes();
      continue;
    }
    const size_t chunks = std::min(chunks_per_slab_, chunks_.size() - 1 - s * chunks_per_slab_);
    const bool last = s + 1 == slabs_.size();
    const size_t touched = (chunks - last) * chunk_bytes + (last ? touched_in_last_ * stride_ * sizeof(float) : 0);
    bytes += (touched + 4095) / 4096 * 4096;
  }
  return bytes;
}

void RowStore::grow_arena() {
  if (size_ < capacity_rows()) return;
  if (chunks_.size() <= 1 && first_chunk_rows_ < kChunkRows) {
    const size_t rows = first_chunk_rows_ == 0 ? kFirstChunkRows : first_chunk_rows_ * 2;
    auto bigger = std::make_unique<float[]>(rows * stride_);
    if (first_chunk_) std::copy_n(first_chunk_.get(), first_chunk_rows_ * stride_, bigger.get());
    first_chunk_ = std::move(bigger);
    first_chunk_rows_ = rows;
    chunks_.assign(1, first_chunk_.get());
    return;
  }
  const size_t in_slab = (chunks_.size() - 1) % chunks_per_slab_;
  if (in_slab == 0) {
    if (!slabs_.empty() && !advised(slabs_.size() - 1) && rows_fill_slab()) slabs_.back().collapse();
    slabs_.emplace_back(slab_bytes(), advised(slabs_.size()));
  }
  chunks_.push_back(static_cast<float*>(slabs_.back().data()) + in_slab * kChunkRows * stride_);
  touched_in_last_ = 0;
}

void RowStore::pop_chunk() {
  const auto begin = reinterpret_cast<uintptr_t>(chunks_.back());
  chunks_.pop_back();
  touched_in_last_ = kChunkRows;
  if ((chunks_.size() - 1) % chunks_per_slab_ == 0) {
    slabs_.pop_back();
    return;
  }
  // Give the chunk's whole pages back; its slab stays for the chunks before it.
  const uintptr_t first = (begin + 4095) & ~uintptr_t{4095};
  const uintptr_t end = (begin + kChunkRows * stride_ * sizeof(float)) & ~uintptr_t{4095};
  if (end > first) ::madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

float* RowStore::insert(uint64_t key, uint64_t hash, bool& added) {
  if (size_ >= UINT32_MAX - 1) throw std::length_error("a sparse table shard holds at most 2^32 - 2 rows");
  if ((size_ + 1) * 4 >= capacity_ * 3) rehash(capacity_ * 2);
  const uint32_t tag = static_cast<uint32_t>(hash);
  for (size_t i = tag & mask_;; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.row_plus_one == 0) {
      grow_arena();
      if (chunks_.size() > 1) touched_in_last_ = std::max(touched_in_last_, size_ % kChunkRows + 1);
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
  const uint32_t tag = static_cast<uint32_t>(hash(key));
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
  if (chunks_.size() > 1 && size_ <= (chunks_.size() - 1) * kChunkRows) pop_chunk();
}

void RowStore::erase_key(uint64_t key) {
  if (find(key) != nullptr) erase(slots_[slot_of(key)].row_plus_one - 1);
}

void RowStore::clear() {
  if (size_ * 4 >= capacity_) {
    std::fill_n(slots_, capacity_, Slot{0, 0});
  } else {  // few rows in a big index: find all their slots first, since emptying one cuts probe chains
    std::vector<size_t> used(size_);
    for (size_t r = 0; r < size_; ++r) used[r] = slot_of(key_at(r));
    for (size_t slot : used) slots_[slot] = Slot{0, 0};
  }
  size_ = 0;
  while (chunks_.size() > 1) pop_chunk();
}

void RowStore::rehash(size_t capacity) {
  std::unique_ptr<Slot[]> old_small = std::move(small_slots_);
  MappedMemory old_big = std::move(big_slots_);
  const Slot* old = slots_;
  const size_t old_capacity = capacity_;
  if (capacity * sizeof(Slot) < kHugeIndexBytes) {
    small_slots_ = std::make_unique<Slot[]>(capacity);  // zeroed: every slot empty
    slots_ = small_slots_.get();
  } else {
    big_slots_ = MappedMemory(capacity * sizeof(Slot), true);  // zeroed by the kernel
    slots_ = static_cast<Slot*>(big_slots_.data());
  }
  capacity_ = capacity;
  mask_ = capacity - 1;
  for (size_t k = 0; k < old_capacity; ++k) {
    const Slot& s = old[k];
    if (s.row_plus_one == 0) continue;
    size_t i = s.tag & mask_;
    while (slots_[i].row_plus_one != 0) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

}  // namespace paddle::ps
