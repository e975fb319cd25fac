#pragma once
// Result files written so that a reader never sees half of one: the contents go to a
// temporary file beside the target (TARGET.tmp), are synced, replace the target by rename, and
// the directory is synced so that the rename itself survives a power loss. A crash or a full
// disk leaves the old file or the new one, never a mix. A failed write removes its temporary
// file and throws DataError naming the target, the step that failed and the system's reason
// ("out/checkpoint-3.bin: cannot write: No space left on device"); a temporary left by a
// killed process is overwritten by the next write. common/atomic_file.h writes such a file as a
// stream, for contents too big to hold in memory.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/atomic_file.h"

namespace paddle::common {

// Creates the parent directories as needed. Durability::kReadersOnly skips the syncs: for a
// status file rewritten at every change, which a power loss may leave older, empty or missing.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents,
                           Durability durability = Durability::kSurvivesPowerLoss, Readers readers = Readers::kAnyone);

// The whole file, or nothing when it cannot be opened (absent, unreadable).
std::optional<std::string> read_file(const std::filesystem::path& path);

}  // namespace paddle::common
