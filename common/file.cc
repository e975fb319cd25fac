#include "common/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace paddle::common {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* doing, int error) {
  throw DataError(fmt::format("{}: cannot {}: {}", path.string(), doing, std::strerror(error)));
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) fail(path, "create its directory", ec.value());
  const std::string tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(tmp, "open", errno);
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      fail(tmp, "write", error);
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    fail(tmp, "sync", error);
  }
  if (::close(fd) != 0) fail(tmp, "close", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail(path, "replace", errno);
}

}  // namespace paddle::common
