#include "kernels/onednn/choice_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <oneapi/dnnl/dnnl.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <thread>

#include "common/file.h"
#include "common/wait.h"

namespace paddle::kernels::onednn {
namespace {

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.starts_with("model name")) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown CPU";
}

// What the timings depend on besides the op: the CPU, the threads oneDNN runs on, its version.
std::string machine_key() {
  const char* threads = std::getenv("OMP_NUM_THREADS");
  const dnnl_version_t* version = dnnl_version();
  return fmt::format("{}, threads: {}, oneDNN {}.{}.{}", cpu_model(),
                     threads != nullptr && *threads != '\0' ? std::string(threads)
                                                            : std::to_string(std::thread::hardware_concurrency()),
                     version->major, version->minor, version->patch);
}

// The file locked for this process's turn, released when it goes; a holder that keeps it past
// `longest_turn` is waited for no longer (the constructor throws).
class FileLock {
 public:
  FileLock(const std::string& path, std::chrono::milliseconds longest_turn)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
    int failure = 0;  // an error other than the lock being another's
    const bool locked_or_failed = common::wait_until(
        longest_turn,
        [&] {
          if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return true;
          if (errno != EWOULDBLOCK && errno != EINTR) failure = errno;
          return failure != 0;
        },
        std::chrono::milliseconds(1));
    if (locked_or_failed && failure == 0) return;
    ::close(fd_);
    throw std::runtime_error(failure != 0 ? fmt::format("cannot lock {}: {}", path, std::strerror(failure))
                                          : fmt::format("another process has held {} for {} ms", path,
                                                        longest_turn.count()));
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

nlohmann::json read_choices(const std::string& path) {
  const std::optional<std::string> text = common::read_file(path);
  if (!text) return nlohmann::json::object();
  nlohmann::json choices = nlohmann::json::parse(*text, nullptr, false);
  if (!choices.is_object()) throw std::runtime_error(fmt::format("{} is not a JSON object of kernel choices", path));
  return choices;
}

}  // namespace

ChoiceCache::ChoiceCache(std::string path, std::chrono::milliseconds longest_turn)
    : path_(std::move(path)), machine_(machine_key()), longest_turn_(longest_turn) {}

void ChoiceCache::give_up(const std::exception& e) {
  fmt::print(stderr, "kernel choices: not kept in {} ({}); this process times its own\n", path_, e.what());
  path_.clear();
}

Decision ChoiceCache::decide(const std::string& key, size_t ways, const std::function<Decision()>& time) {
  if (path_.empty()) return time();
  const std::string full_key = machine_ + " | " + key;
  std::optional<FileLock> turn;
  nlohmann::json choices;
  try {
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path());  // for the lock
    turn.emplace(path_ + ".lock", longest_turn_);
    choices = read_choices(path_);
  } catch (const std::exception& e) {  // std::filesystem_error, std::runtime_error
    give_up(e);
    return time();
  }
  if (const auto kept = choices.find(full_key); kept != choices.end() && kept->is_object()) {
    const size_t index = kept->value("index", ways);
    if (index < ways) return Decision{index, kept->value("words", std::string()), true};
  }
  const Decision decision = time();  // with the file locked: another process asking waits for this
  try {
    choices[full_key] = {{"index", decision.index}, {"words", decision.words}};
    common::write_file_atomically(path_, choices.dump(1) + "\n", common::Durability::kReadersOnly);
  } catch (const std::exception& e) {
    give_up(e);
  }
  return decision;
}

}  // namespace paddle::kernels::onednn
