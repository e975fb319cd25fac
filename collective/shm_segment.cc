#include "collective/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <signal.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <random>

#include "collective/communicator.h"

namespace paddle::collective {
namespace {

std::string errno_text(int error) { return std::strerror(error); }

std::string sanitized(const std::string& job_id) {
  std::string out;
  for (char c : job_id.substr(0, 64)) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out.empty() ? "default" : out;
}

std::string as_string(const std::vector<char>& bytes) { return std::string(bytes.begin(), bytes.end()); }

void put(gloo::rendezvous::Store& store, const std::string& key, const std::string& value) {
  store.set(key, std::vector<char>(value.begin(), value.end()));
}

std::string fetch(gloo::rendezvous::Store& store, const std::string& key, std::chrono::milliseconds timeout) {
  store.wait({key}, timeout);
  return as_string(store.get(key));
}

// A creator killed between creating its segment and unlinking it leaves the name behind; the
// next creator of the same job removes names whose creator process is gone.
void remove_stale(const std::string& prefix) {
  DIR* dir = opendir("/dev/shm");
  if (!dir) return;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    const size_t dash = name.find('-', name.find("-g", prefix.size() - 1) + 2);
    if (dash == std::string::npos) continue;
    const long pid = std::strtol(name.c_str() + dash + 1, nullptr, 10);
    if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) shm_unlink(("/" + name).c_str());
  }
  closedir(dir);
}

}  // namespace

std::string ShmSegment::name_prefix(const std::string& job_id) { return "paddle-" + sanitized(job_id) + "-"; }

ShmSegment::ShmSegment(const ShmSegmentConfig& config, gloo::rendezvous::Store& store, size_t bytes) : size_(bytes) {
  if (config.index == 0) {
    create_published(config, store);
  } else {
    open_published(config, store);
  }
}

ShmSegment::~ShmSegment() {
  if (data_) munmap(data_, size_);
}

void ShmSegment::map(int fd) {
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int error = errno;
  ::close(fd);
  if (p == MAP_FAILED)
    throw CollectiveError(fmt::format("shared memory {}: mmap of {} bytes failed: {}", name_, size_, errno_text(error)));
  data_ = p;
}

int ShmSegment::create_file() {
  int fd = shm_open(name_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0)
    throw CollectiveError(fmt::format("shared memory {}: shm_open failed: {}; set PADDLE_COLLECTIVE_SHM=0 to use Gloo "
                                      "over TCP instead", name_, errno_text(errno)));
  if (int error = posix_fallocate(fd, 0, static_cast<off_t>(size_)); error != 0) {
    ::close(fd);
    shm_unlink(name_.c_str());
    throw CollectiveError(fmt::format("shared memory {}: cannot reserve {} bytes in /dev/shm: {}; make room there or "
                                      "set PADDLE_COLLECTIVE_SHM=0 to use Gloo over TCP instead",
                                      name_, size_, errno_text(error)));
  }
  return fd;
}

void ShmSegment::create_published(const ShmSegmentConfig& config, gloo::rendezvous::Store& store) {
  remove_stale(name_prefix(config.job_id));
  std::random_device random;
  name_ = fmt::format("/{}g{}-{}-{:08x}", name_prefix(config.job_id), config.generation, getpid(), random());
  const std::string name_key = config.key_prefix + "/name";
  int fd;
  try {
    fd = create_file();
  } catch (const CollectiveError& e) {
    put(store, name_key, std::string("!") + e.what());
    throw;
  }
  try {
    map(fd);
    put(store, name_key, name_);
    for (int i = 1; i < config.group_size; ++i) {
      const std::string answer = fetch(store, fmt::format("{}/mapped/{}", config.key_prefix, i), config.timeout);
      if (answer != "ok") throw CollectiveError(answer.substr(1));
    }
  } catch (const CollectiveError&) {
    shm_unlink(name_.c_str());
    throw;
  } catch (const std::exception& e) {
    shm_unlink(name_.c_str());
    put(store, name_key, std::string("!") + e.what());
    throw CollectiveError(fmt::format("shared memory {}: setting up with the node's other ranks failed: {}", name_, e.what()));
  }
  shm_unlink(name_.c_str());
}

std::unique_ptr<ShmSegment> ShmSegment::create(const std::string& name, size_t bytes) {
  std::unique_ptr<ShmSegment> segment(new ShmSegment(name, bytes));
  const int fd = segment->create_file();
  try {
    segment->map(fd);
  } catch (...) {
    segment->unlink();
    throw;
  }
  return segment;
}

std::unique_ptr<ShmSegment> ShmSegment::open(const std::string& name, size_t bytes) {
  std::unique_ptr<ShmSegment> segment(new ShmSegment(name, bytes));
  segment->open_file();
  return segment;
}

void ShmSegment::unlink() const { shm_unlink(name_.c_str()); }

void ShmSegment::open_published(const ShmSegmentConfig& config, gloo::rendezvous::Store& store) {
  std::string name;
  try {
    name = fetch(store, config.key_prefix + "/name", config.timeout);
  } catch (const std::exception& e) {
    throw CollectiveError(fmt::format("shared memory: the node's first rank never published its segment: {}", e.what()));
  }
  if (!name.empty() && name[0] == '!') throw CollectiveError(name.substr(1));
  name_ = name;
  const std::string mapped_key = fmt::format("{}/mapped/{}", config.key_prefix, config.index);
  try {
    open_file();
  } catch (const CollectiveError& e) {
    put(store, mapped_key, fmt::format("!rank {} of the node: {}", config.index, e.what()));
    throw;
  }
  put(store, mapped_key, "ok");
}

void ShmSegment::open_file() {
  int fd = shm_open(name_.c_str(), O_RDWR, 0);
  if (fd < 0) throw CollectiveError(fmt::format("shared memory {}: shm_open failed: {}", name_, errno_text(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != size_) {
    ::close(fd);
    throw CollectiveError(fmt::format("shared memory {}: has {} bytes, expected {}", name_, st.st_size, size_));
  }
  map(fd);
}

}  // namespace paddle::collective
