#pragma once
// RowStore: the rows of one sparse table shard, uint64 key -> a row of `width` floats, in memory
// that stays close to the rows' own size however the table grows or shrinks.
//
// Layout (ps-lite style; no per-key allocation):
//
//   chunks_: the arena. Row r is chunk r / kChunkRows, at (r % kChunkRows) * stride words, where
//            a row is its key (2 words, native order) then its `width` floats. Chunk 0 lives on
//            the heap and doubles from kFirstChunkRows to kChunkRows as it fills, so a small
//            store stays small; later chunks are cut in order from 2 MiB slabs (MappedMemory),
//            advised for huge pages once the store has kHugePageChunks chunks; a slab filled
//            before that is collapsed into huge pages once full (rows met at random each cost a
//            page walk otherwise). The slack is at most one slab, never the 2x of one growing
//            vector.
//   slots_:  the index, a power-of-two array of {tag, row + 1} (8 bytes); row + 1 == 0 marks an
//            empty slot. tag is the low 32 bits of hash(key) and a key's home slot is tag & mask,
//            so rehashing reads no row. Linear probing; a lookup compares tags first and reads a
//            row's key only when its tag matches. The index doubles before it is 3/4 full; from
//            kHugeIndexBytes it is a MappedMemory advised for huge pages.
//
// Rows are numbered 0 .. size() - 1. erase() keeps them dense: the last row moves into the
// erased row's place (so row numbers change; keys do not), and a chunk emptied at the end is
// given back (its pages, or its slab once the slab's first chunk goes). arena_bytes() counts
// what the kernel backs: the heap chunk, advised slabs whole, other slabs' touched pages. Slots are erased by shifting the probe chain back (no tombstones). Keys are any uint64.
// A row pointer is valid until the next insert or erase.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "ps/table/mapped_memory.h"

namespace paddle::ps {

class RowStore {
 public:
  static constexpr size_t kChunkRows = 512;
  static constexpr size_t kFirstChunkRows = 16;
  static constexpr size_t kHugePageChunks = 512;
  static constexpr size_t kHugeIndexBytes = MappedMemory::kHugePage;

  explicit RowStore(size_t width);
  RowStore(const RowStore&) = delete;
  RowStore& operator=(const RowStore&) = delete;

  size_t width() const { return width_; }
  size_t size() const { return size_; }
  // The index's hash of a key: a full 64-bit mix, since the keys one server holds share their
  // residue modulo the server count. A caller taking a batch computes it once per key and passes
  // it to the calls below; the index uses its low 32 bits, so the high 32 are free for the caller.
  static uint64_t hash(uint64_t key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ULL;
    key ^= key >> 33;
    return key;
  }
  // The floats of `key`'s row, or nullptr.
  float* find(uint64_t key) { return find(key, hash(key)); }
  float* find(uint64_t key, uint64_t hash) {
    const uint32_t tag = static_cast<uint32_t>(hash);
    for (size_t i = tag & mask_;; i = (i + 1) & mask_) {
      const Slot s = slots_[i];
      if (s.row_plus_one == 0) return nullptr;
      if (s.tag == tag && key_at(s.row_plus_one - 1) == key) return at(s.row_plus_one - 1);
    }
  }
  // The row of `key`; a new one (zeroed) when `added`.
  float* insert(uint64_t key, bool& added) { return insert(key, hash(key), added); }
  float* insert(uint64_t key, uint64_t hash, bool& added);
  float* at(size_t row) { return words(row) + 2; }
  uint64_t key_at(size_t row) const {
    uint64_t key;
    std::memcpy(&key, words(row), sizeof key);
    return key;
  }
  // Removes row `row`; the last row takes its number.
  void erase(size_t row);
  // Removes `key`'s row, if any.
  void erase_key(uint64_t key);
  // Forgets every row, keeping the index's and the first chunk's memory for the next use.
  void clear();

  // For a software prefetch ahead of a batch of lookups, by the key's hash(): where find() starts
  // looking, and, once that slot is in the cache, the row of the first slot with the key's tag
  // (or nullptr).
  const void* probe_address(uint64_t hash) const { return &slots_[static_cast<uint32_t>(hash) & mask_]; }
  const void* likely_row(uint64_t hash) const {
    const uint32_t tag = static_cast<uint32_t>(hash);
    for (size_t i = tag & mask_;; i = (i + 1) & mask_) {
      const Slot s = slots_[i];
      if (s.row_plus_one == 0) return nullptr;
      if (s.tag == tag) return words(s.row_plus_one - 1);
    }
  }

  // Bytes allocated: the arena's chunks, and the index's slots.
  uint64_t arena_bytes() const;
  uint64_t index_bytes() const { return capacity_ * sizeof(Slot); }

 private:
  struct Slot {
    uint32_t tag;
    uint32_t row_plus_one;
  };
  float* words(size_t row) { return chunks_[row / kChunkRows] + (row % kChunkRows) * stride_; }
  const float* words(size_t row) const { return chunks_[row / kChunkRows] + (row % kChunkRows) * stride_; }
  size_t slot_of(uint64_t key) const;  // of a key that is in the index
  void rehash(size_t capacity);
  void grow_arena();  // room for row size_
  void pop_chunk();   // the last chunk, emptied
  size_t capacity_rows() const;
  size_t slab_bytes() const;
  bool advised(size_t slab) const;  // whether slab `slab` asks for huge pages
  bool rows_fill_slab() const;      // whether the rows leave a slab at most a tenth unused (so it may take huge pages)

  size_t width_, stride_;
  size_t size_ = 0;
  std::vector<float*> chunks_;
  std::unique_ptr<float[]> first_chunk_;  // chunks_[0]
  size_t first_chunk_rows_ = 0;
  size_t chunks_per_slab_;
  std::vector<MappedMemory> slabs_;  // chunks_[1..] in order, chunks_per_slab_ each
  size_t touched_in_last_ = 0;       // rows of chunks_.back() ever used, when it is in a slab
  Slot* slots_ = nullptr;
  size_t capacity_ = 0;
  std::unique_ptr<Slot[]> small_slots_;  // slots_, under kHugeIndexBytes
  MappedMemory big_slots_;               // slots_, from kHugeIndexBytes
  size_t mask_ = 0;
};

}  // namespace paddle::ps
