#include "launcher/supervise/orphan_guard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

#include "common/error.h"
#include "launcher/supervise/orphan_watchdog.h"

namespace paddle::launcher {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKeysVariable = "PADDLE_LAUNCH_JOB_KEYS";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Where cgroup v2 is mounted, from /proc/self/mountinfo ("... - cgroup2 cgroup rw").
std::optional<std::string> cgroup2_mount() {
  std::istringstream lines(read_text("/proc/self/mountinfo"));
  for (std::string line; std::getline(lines, line);) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, device, root, mount_point;
    if (fields >> id >> parent >> device >> root >> mount_point) return mount_point;
  }
  return std::nullopt;
}

// This process's cgroup v2 path ("0::/user.slice/..."), relative to the mount.
std::optional<std::string> own_cgroup() {
  std::istringstream lines(read_text("/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("0::")) return line.substr(3);
  return std::nullopt;
}

std::string random_key() {
  std::random_device random;
  return fmt::format("{:08x}{:08x}", random(), random());
}

bool environ_holds_key(pid_t pid, const std::string& key) {
  const std::string environ = read_text(fmt::format("/proc/{}/environ", pid));
  const std::string prefix = std::string(kKeysVariable) + "=";
  for (size_t start = 0; start < environ.size();) {
    size_t end = environ.find('\0', start);
    if (end == std::string::npos) end = environ.size();
    std::string_view entry(environ.data() + start, end - start);
    if (entry.starts_with(prefix)) {
      std::istringstream keys{std::string(entry.substr(prefix.size()))};
      for (std::string k; std::getline(keys, k, ',');)
        if (k == key) return true;
      return false;
    }
    start = end + 1;
  }
  return false;
}

int signal_cgroup(const fs::path& dir, int sig) {
  int count = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_directory(ec)) count += signal_cgroup(entry.path(), sig);  // an inner launcher's job
  std::istringstream pids(read_text(dir / "cgroup.procs"));
  for (pid_t pid; pids >> pid;) count += ::kill(pid, sig) == 0;
  return count;
}

}  // namespace

int signal_marked_processes(OrphanGuard::Mode mode, const std::string& target, int sig) {
  if (mode == OrphanGuard::Mode::kCgroup) {
    const fs::path dir(target);
    const int count = signal_cgroup(dir, sig == SIGKILL ? 0 : sig);  // signal 0: only count them
    if (sig == SIGKILL && count > 0) {
      std::ofstream kill_file(dir / "cgroup.kill");
      if (!(kill_file << "1" << std::flush)) signal_cgroup(dir, SIGKILL);  // before Linux 5.14
    }
    return count;
  }
  int count = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const pid_t pid = std::stoi(name);
    if (pid != ::getpid() && environ_holds_key(pid, target) && ::kill(pid, sig) == 0) ++count;
  }
  return count;
}

std::string orphan_guard_choice(const EnvMap& env) {
  const std::string wanted = get_env(env, "PADDLE_ORPHAN_GUARD").value_or("auto");
  if (wanted != "auto" && wanted != "cgroup" && wanted != "environment")
    throw common::ConfigError(fmt::format("PADDLE_ORPHAN_GUARD={}: give auto, cgroup or environment", wanted));
  return wanted;
}

OrphanGuard::OrphanGuard(const EnvMap& env, OrphanWatchdog& watchdog) {
  const std::string wanted = orphan_guard_choice(env);
  inherited_keys_ = get_env(env, kKeysVariable).value_or("");
  key_ = random_key();
  std::string no_cgroup;
  if (wanted != "environment") {
    const auto mount = cgroup2_mount();
    const auto own = own_cgroup();
    if (!mount || !own) {
      no_cgroup = "no cgroup v2 is mounted";
    } else {
      cgroup_dir_ = (fs::path(*mount) / fs::path(*own).relative_path() / fmt::format("paddle-launch-{}", ::getpid()))
                        .lexically_normal()
                        .string();
      ::rmdir(cgroup_dir_.c_str());  // left by an earlier launcher of this pid, killed with its watchdog
      if (::mkdir(cgroup_dir_.c_str(), 0755) != 0) {
        no_cgroup = fmt::format("cannot make {}: {}", cgroup_dir_, std::strerror(errno));
      } else if ((procs_fd_ = ::open((cgroup_dir_ + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC)) < 0) {
        no_cgroup = fmt::format("cannot open {}/cgroup.procs: {}", cgroup_dir_, std::strerror(errno));
        ::rmdir(cgroup_dir_.c_str());
      }
    }
    if (!no_cgroup.empty() && wanted == "cgroup")
      throw common::ConfigError(fmt::format("PADDLE_ORPHAN_GUARD=cgroup: {}", no_cgroup));
  }
  if (procs_fd_ >= 0) {
    mode_ = Mode::kCgroup;
    const bool kill_file = ::access((cgroup_dir_ + "/cgroup.kill").c_str(), W_OK) == 0;
    description_ = fmt::format("cgroup v2 {} ({})", cgroup_dir_, kill_file ? "cgroup.kill" : "each member signalled");
  } else {
    mode_ = Mode::kEnvironment;
    description_ = fmt::format("the environment ({} in each process; {})", kKeysVariable,
                               no_cgroup.empty() ? "PADDLE_ORPHAN_GUARD=environment" : "no cgroup v2: " + no_cgroup);
  }
  try {
    watchdog.guard(mode_, mode_ == Mode::kCgroup ? cgroup_dir_ : key_);
  } catch (...) {
    if (procs_fd_ >= 0) ::close(procs_fd_);
    if (!cgroup_dir_.empty()) ::rmdir(cgroup_dir_.c_str());
    throw;
  }
}

OrphanGuard::~OrphanGuard() {
  signal_all(SIGKILL);
  if (procs_fd_ >= 0) ::close(procs_fd_);
}

std::pair<std::string, std::string> OrphanGuard::child_variable() const {
  return {kKeysVariable, inherited_keys_.empty() ? key_ : inherited_keys_ + "," + key_};
}

int OrphanGuard::signal_all(int sig) const {
  return signal_marked_processes(mode_, mode_ == Mode::kCgroup ? cgroup_dir_ : key_, sig);
}

}  // namespace paddle::launcher
