#pragma once
// Result files written so that a reader never sees half of one: the contents go to a
// temporary file beside the target, are synced, and replace the target by rename. A crash
// leaves the old file or the new one. Every failure throws DataError naming the path and the
// system's reason.

#include <filesystem>
#include <string_view>

namespace paddle::common {

// Creates the parent directories as needed.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

}  // namespace paddle::common
