// probe: a stand-in training program for the launcher's end-to-end tests.
//
//   probe [--dump DIR] [--print TEXT]... [--lines N] [--grandchild] [--ignore-term]
//         [--sleep S] [--exit CODE | --signal SIG] [--fail-role ROLE] [--fail-rank R]
//         [--fail-attempt A] [--fail-after S] [--crash segv|abort|throw]
//
// It writes DIR/PID.json (its pid, process group, parent, argv, whole environment and the
// descriptors it was started with), prints, optionally starts a grandchild that sleeps
// (recorded in the dump), then either fails (exits with CODE or kills itself with SIG) if it
// matches every --fail-* filter, after --fail-after seconds, or sleeps --sleep seconds and exits 0. Role is trainer, server or worker (from
// TRAINING_ROLE); rank is PADDLE_TRAINER_ID, or the server's index in PADDLE_PSERVERS_IP_PORT_LIST.
// --crash fails by a segfault, abort() or an uncaught nested exception instead, with the crash
// handlers of common/crash_handlers.h installed, as train has them.

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/crash_handlers.h"
#include "common/environment.h"

extern char** environ;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

std::string my_role() {
  std::string r = env_or("TRAINING_ROLE", "");
  if (r == "PSERVER") return "server";
  if (r == "TRAINER") return "worker";
  return "trainer";
}

int my_rank() {
  if (my_role() != "server") return std::atoi(env_or("PADDLE_TRAINER_ID", "0").c_str());
  std::string me = env_or("POD_IP", "") + ":" + env_or("PADDLE_PORT", "");
  std::stringstream list(env_or("PADDLE_PSERVERS_IP_PORT_LIST", ""));
  std::string item;
  for (int i = 0; std::getline(list, item, ','); ++i)
    if (item == me) return i;
  return -1;
}

// The descriptors this process was started with (what its launcher let it inherit).
std::vector<int> open_descriptors() {
  std::vector<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  while (const dirent* e = readdir(dir))
    if (std::isdigit(static_cast<unsigned char>(e->d_name[0])) && std::atoi(e->d_name) != dirfd(dir))
      fds.push_back(std::atoi(e->d_name));
  closedir(dir);
  std::sort(fds.begin(), fds.end());
  return fds;
}

void sleep_seconds(double s) {
  if (s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

int signal_number(const std::string& name) {
  if (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0]))) return std::atoi(name.c_str());
  std::string n = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
  for (int s = 1; s < NSIG; ++s)
    if (const char* abbrev = sigabbrev_np(s); abbrev != nullptr && n == abbrev) return s;
  return SIGKILL;
}

[[gnu::noinline]] void crash_deliberately(const std::string& how) {
  if (how == "segv") {
    volatile int* nowhere = nullptr;
    *nowhere = 42;
  } else if (how == "abort") {
    std::abort();
  } else {
    try {
      throw std::out_of_range("step 7 of 6");
    } catch (...) {
      std::throw_with_nested(std::runtime_error("the probe's training step failed"));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<int> inherited = open_descriptors();
  paddle::common::install_crash_handlers(paddle::common::current_environment());
  std::string dump_dir, fail_role, signal_name, crash;
  std::vector<std::string> prints;
  int lines = 0, exit_code = 0, fail_rank = -1, fail_attempt = -1;
  bool grandchild = false, ignore_term = false, fail_exit = false;
  double sleep_s = 0, fail_after = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "probe: " << a << " needs a value\n";
        std::exit(64);
      }
      return argv[++i];
    };
    if (a == "--dump") dump_dir = next();
    else if (a == "--print") prints.push_back(next());
    else if (a == "--lines") lines = std::stoi(next());
    else if (a == "--grandchild") grandchild = true;
    else if (a == "--ignore-term") ignore_term = true;
    else if (a == "--sleep") sleep_s = std::stod(next());
    else if (a == "--exit") { exit_code = std::stoi(next()); fail_exit = true; }
    else if (a == "--signal") signal_name = next();
    else if (a == "--fail-role") fail_role = next();
    else if (a == "--fail-rank") fail_rank = std::stoi(next());
    else if (a == "--fail-attempt") fail_attempt = std::stoi(next());
    else if (a == "--fail-after") fail_after = std::stod(next());
    else if (a == "--crash") crash = next();
    else { std::cerr << "probe: unknown argument " << a << "\n"; return 64; }
  }
  if (ignore_term) std::signal(SIGTERM, SIG_IGN);

  pid_t grandchild_pid = 0;
  if (grandchild) {
    grandchild_pid = fork();
    if (grandchild_pid == 0) {
      std::signal(SIGTERM, SIG_IGN);  // only SIGKILL of the group ends it
      sleep_seconds(600);
      _exit(0);
    }
  }

  const int attempt = std::atoi(env_or("PADDLE_RESTART_COUNT", "0").c_str());
  if (!dump_dir.empty()) {
    nlohmann::json doc;
    doc["pid"] = getpid();
    doc["pgid"] = getpgrp();
    doc["ppid"] = getppid();
    doc["role"] = my_role();
    doc["rank"] = my_rank();
    doc["attempt"] = attempt;
    doc["grandchild"] = grandchild_pid;
    doc["argv"] = std::vector<std::string>(argv, argv + argc);
    nlohmann::json env = nlohmann::json::object();
    for (char** e = environ; *e != nullptr; ++e) {
      const char* eq = std::strchr(*e, '=');
      if (eq != nullptr) env[std::string(static_cast<const char*>(*e), eq)] = std::string(eq + 1);
    }
    doc["env"] = env;
    doc["fds"] = inherited;
    const std::string path = dump_dir + "/" + std::to_string(getpid()) + ".json";
    std::ofstream(path + ".tmp") << doc.dump(1);
    std::rename((path + ".tmp").c_str(), path.c_str());
  }
  for (const auto& p : prints) std::cout << p << std::endl;
  for (int i = 0; i < lines; ++i) std::cout << "line " << i << " of " << my_role() << " " << my_rank() << "\n";
  std::cout.flush();

  const bool fails = (fail_exit || !signal_name.empty() || !crash.empty()) && (fail_role.empty() || fail_role == my_role()) &&
                     (fail_rank < 0 || fail_rank == my_rank()) && (fail_attempt < 0 || fail_attempt == attempt);
  if (fails) {
    sleep_seconds(fail_after);
    std::cerr << "probe: " << my_role() << " " << my_rank() << " failing on purpose" << std::endl;
    if (!crash.empty()) crash_deliberately(crash);
    if (!signal_name.empty()) {
      std::signal(signal_number(signal_name), SIG_DFL);
      raise(signal_number(signal_name));
    }
    return exit_code;
  }
  sleep_seconds(sleep_s);
  return 0;
}
