#pragma once
// MappedMemory: a zeroed block of anonymous memory aligned to 2 MiB, for the arrays of big sparse
// tables. With huge_pages the kernel is asked (madvise MADV_HUGEPAGE) to back it with
// transparent huge pages: a table of tens of millions of rows touched at random otherwise spends
// its time walking page tables that no longer fit the cache. Without huge_pages it is committed
// page by page as it is touched, like any other allocation.

#include <cstddef>

namespace paddle::ps {

class MappedMemory {
 public:
  static constexpr size_t kHugePage = size_t{2} << 20;

  MappedMemory() = default;
  // Throws std::bad_alloc when the kernel has no room.
  MappedMemory(size_t bytes, bool huge_pages);
  ~MappedMemory();
  MappedMemory(MappedMemory&& other) noexcept;
  MappedMemory& operator=(MappedMemory&& other) noexcept;
  MappedMemory(const MappedMemory&) = delete;
  MappedMemory& operator=(const MappedMemory&) = delete;

  // Asks the kernel to back the block with huge pages now, copying what it holds (MADV_COLLAPSE,
  // Linux 6.1): for a block filled before it was worth advising. Advice only.
  void collapse() const;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace paddle::ps
