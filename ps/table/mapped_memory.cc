#include "ps/table/mapped_memory.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>
#include <utility>

namespace paddle::ps {

MappedMemory::MappedMemory(size_t bytes, bool huge_pages) : bytes_(bytes) {
  // Map a huge page more than asked and cut the unaligned ends off.
  const size_t mapped = bytes + kHugePage;
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (start + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
  if (aligned > start) ::munmap(p, aligned - start);
  const uintptr_t end = aligned + ((bytes + 4095) & ~size_t{4095});
  if (start + mapped > end) ::munmap(reinterpret_cast<void*>(end), start + mapped - end);
  data_ = reinterpret_cast<void*>(aligned);
  if (huge_pages) ::madvise(data_, bytes, MADV_HUGEPAGE);  // advice only: without THP it stays 4 KiB pages
}

void MappedMemory::collapse() const {
#ifdef MADV_COLLAPSE
  if (data_ != nullptr) ::madvise(data_, bytes_, MADV_COLLAPSE);
#endif
}

MappedMemory::~MappedMemory() {
  if (data_ != nullptr) ::munmap(data_, (bytes_ + 4095) & ~size_t{4095});
}

MappedMemory::MappedMemory(MappedMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

MappedMemory& MappedMemory::operator=(MappedMemory&& other) noexcept {
  if (this != &other) {
    this->~MappedMemory();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

}  // namespace paddle::ps
