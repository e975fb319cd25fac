#pragma once
// AtomicFile: a file written as a stream that readers see whole or not at all, for files too big
// to build in memory first (a parameter server's checkpoint of tens of millions of rows). The
// bytes go through a buffer to TARGET.tmp, a running CRC-32 (common/checksum.h) taken as they
// pass; commit() syncs the file, renames it over the target and syncs the directory (with
// Durability::kReadersOnly it only renames: for a status file rewritten at every change, which
// need not wait for the disk, and which a power loss may leave older, empty or missing). An
// AtomicFile destroyed without commit() (an exception while writing) removes its temporary file.
// A failed step throws DataError naming the target, the step and the system's reason, as
// common/file.h's write_file_atomically, which is this class writing one string.
//
//   AtomicFile file("out/ps-server-0.bin");
//   table.save(file.stream());
//   file.append_checksum();  // 4 bytes, little-endian: the CRC-32 of everything before them
//   file.commit();

#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>

namespace paddle::common {

// What commit() promises: that the file survives a power loss, or only that readers see it
// whole.
enum class Durability { kSurvivesPowerLoss, kReadersOnly };
// Who may read the file: anyone (0644), or its owner alone (0600: a file holding a process's
// environment).
enum class Readers { kAnyone, kOwnerOnly };

class AtomicFile {
 public:
  // Creates the parent directories as needed and opens the temporary file.
  explicit AtomicFile(std::filesystem::path path, Durability durability = Durability::kSurvivesPowerLoss,
                      Readers readers = Readers::kAnyone);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Where to write; a failed write throws (from here or from commit()).
  std::ostream& stream();
  // The CRC-32 of the bytes written so far.
  uint32_t crc() const;
  void append_checksum();
  void commit();

 private:
  class Buffer;
  std::filesystem::path path_;
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
  Durability durability_;
  bool committed_ = false;
};

}  // namespace paddle::common
