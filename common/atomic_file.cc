#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <streambuf>
#include <string_view>

#include "common/checksum.h"
#include "common/error.h"

namespace paddle::common {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, std::string_view doing, int error) {
  throw DataError(fmt::format("{}: cannot {}: {}", path.string(), doing, std::strerror(error)));
}

void sync_directory(const std::filesystem::path& path) {
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(dir, "open to sync the rename of " + path.filename().string(), errno);
  // EINVAL: a file system that cannot sync directories, where the rename is as durable as it gets.
  const int error = ::fsync(fd) != 0 && errno != EINVAL ? errno : 0;
  ::close(fd);
  if (error != 0) fail(dir, "sync", error);
}

}  // namespace

// Holds up to kBytes, then writes them to the temporary file, the CRC taken on the way.
class AtomicFile::Buffer : public std::streambuf {
 public:
  static constexpr size_t kBytes = 1 << 20;

  // Left uninitialised: a small file touches only its first page of the buffer.
  Buffer(const std::filesystem::path& target, std::string temporary, mode_t mode)
      : target_(target), temporary_(std::move(temporary)), bytes_(std::make_unique_for_overwrite<char[]>(kBytes)) {
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd_ < 0) fail(target_, "create its temporary file", errno);
    // O_CREAT leaves the mode of a temporary file an earlier writer left behind.
    if (mode != 0644 && ::fchmod(fd_, mode) != 0) {
      const int error = errno;
      ::close(fd_);
      fail(target_, "restrict its temporary file's mode", error);
    }
    setp(bytes_.get(), bytes_.get() + kBytes);
  }
  ~Buffer() override {
    if (fd_ >= 0) ::close(fd_);
  }

  uint32_t crc() const {
    return crc32(crc_, std::string_view(pbase(), static_cast<size_t>(pptr() - pbase())));
  }
  // Writes what is buffered, syncs (when `sync`) and closes the file.
  void finish(bool sync) {
    drain();
    if (sync && ::fsync(fd_) != 0) fail(target_, "sync", errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(target_, "close", errno);
  }
  const std::string& temporary() const { return temporary_; }

 protected:
  int_type overflow(int_type c) override {
    drain();
    if (!traits_type::eq_int_type(c, traits_type::eof())) sputc(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* data, std::streamsize n) override {
    if (n <= 0) return 0;  // an empty write may come with no data pointer at all
    const std::streamsize room = epptr() - pptr();
    if (n <= room) {
      std::memcpy(pptr(), data, static_cast<size_t>(n));
      pbump(static_cast<int>(n));
      return n;
    }
    drain();
    if (static_cast<size_t>(n) >= kBytes) {  // a big piece goes straight to the file
      write_out(std::string_view(data, static_cast<size_t>(n)));
      return n;
    }
    std::memcpy(pptr(), data, static_cast<size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }

 private:
  void drain() {
    write_out(std::string_view(pbase(), static_cast<size_t>(pptr() - pbase())));
    setp(bytes_.get(), bytes_.get() + kBytes);
  }
  void write_out(std::string_view bytes) {
    crc_ = crc32(crc_, bytes);
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(target_, "write", errno);
      bytes.remove_prefix(static_cast<size_t>(n));
    }
  }

  std::filesystem::path target_;
  std::string temporary_;
  std::unique_ptr<char[]> bytes_;
  int fd_ = -1;
  uint32_t crc_ = crc32(std::string_view());
};

AtomicFile::AtomicFile(std::filesystem::path path, Durability durability, Readers readers)
    : path_(std::move(path)), durability_(durability) {
  std::error_code ec;
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path(), ec);
  if (ec) fail(path_, "create its directory", ec.value());
  buffer_ = std::make_unique<Buffer>(path_, path_.string() + ".tmp", readers == Readers::kOwnerOnly ? 0600 : 0644);
  stream_ = std::make_unique<std::ostream>(buffer_.get());
  stream_->exceptions(std::ios::badbit);  // a failed write throws the buffer's DataError
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  stream_.reset();
  const std::string temporary = buffer_->temporary();
  buffer_.reset();
  ::unlink(temporary.c_str());  // a full disk gets its space back
}

std::ostream& AtomicFile::stream() { return *stream_; }

uint32_t AtomicFile::crc() const { return buffer_->crc(); }

void AtomicFile::append_checksum() {
  const uint32_t value = crc();
  char bytes[4];
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  stream_->write(bytes, 4);
}

void AtomicFile::commit() {
  stream_->flush();
  const bool durable = durability_ == Durability::kSurvivesPowerLoss;
  buffer_->finish(durable);
  if (::rename(buffer_->temporary().c_str(), path_.c_str()) != 0) fail(path_, "replace", errno);
  committed_ = true;
  if (durable) sync_directory(path_);
}

}  // namespace paddle::common
