#include "common/file.h"

#include <fstream>
#include <sstream>
#include <string_view>

#include "common/atomic_file.h"

namespace paddle::common {

void write_file_atomically(const std::filesystem::path& path, std::string_view contents, Durability durability,
                           Readers readers) {
  AtomicFile file(path, durability, readers);
  file.stream().write(contents.data(), static_cast<std::streamsize>(contents.size()));
  file.commit();
}

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace paddle::common
