#include "launcher/dispatch/node_agent.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <fmt/format.h>
#include <fstream>
#include <thread>

#include "common/error.h"

namespace paddle::launcher {
namespace {

using Clock = std::chrono::steady_clock;

// Waits up to `timeout` for stdin to be readable; false on timeout.
bool stdin_readable(std::chrono::milliseconds timeout) {
  pollfd fd{STDIN_FILENO, POLLIN, 0};
  int n;
  while ((n = ::poll(&fd, 1, static_cast<int>(timeout.count()))) < 0 && errno == EINTR) {}
  return n > 0;
}

// One line of stdin, read a byte at a time so that nothing after it is taken from the stream.
std::string read_environment_line() {
  std::string line;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  for (;;) {
    if (!stdin_readable(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now())))
      throw common::ConfigError("--agent: no environment line on stdin within 30 s (the dispatcher sends it first)");
    char c;
    const ssize_t n = ::read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw common::ConfigError("--agent: stdin ended before the environment line");
    if (c == '\n') return line;
    line += c;
  }
}

}  // namespace

NodeAgent::NodeAgent(LaunchOptions& options, EnvMap& env) {
  if (!options.master || !options.node_rank)
    throw common::UsageError("--agent: a node agent needs --master and --rank (the dispatcher gives them)");
  const std::string line = read_environment_line();
  nlohmann::json message;
  try {
    message = nlohmann::json::parse(line);
    for (const auto& [name, value] : message.at("env").items()) env[name] = value.get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw common::ConfigError(fmt::format("--agent: stdin line 1: not {{\"env\": {{NAME: VALUE}}}}: {}", e.what()));
  }
  if (auto nic = get_env(env, "PADDLE_NIC"); nic && !options.iface) options.iface = *nic;
  std::ofstream nodefile("nodefile");
  nodefile << *options.node_rank << "\n";
  if (!nodefile.flush())
    throw common::DataError(fmt::format("--agent: cannot write nodefile in the workspace (node {})", *options.node_rank));
}

void NodeAgent::watch_dispatcher(LaunchLog& log, std::chrono::seconds silence_limit) {
  std::thread([&log, silence_limit] {
    auto last_word = Clock::now();
    std::string why;
    for (;;) {
      if (stdin_readable(std::chrono::milliseconds(1000))) {
        char buffer[256];
        const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          why = "the dispatcher's session ended (stdin closed)";
          break;
        }
        last_word = Clock::now();
      } else if (Clock::now() - last_word > silence_limit) {
        why = fmt::format("no word from the dispatcher for {}s", silence_limit.count());
        break;
      }
    }
    log.warning(fmt::format("--agent: {}; stopping the job on this node", why));
    ::kill(::getpid(), SIGTERM);
  }).detach();
}

}  // namespace paddle::launcher
