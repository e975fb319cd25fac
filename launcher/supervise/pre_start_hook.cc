#include "launcher/supervise/pre_start_hook.h"

#include <csignal>

#include <boost/asio/io_context.hpp>

#include "launcher/supervise/child_process.h"

namespace paddle::launcher {

std::optional<int> run_pre_start_hook(const std::string& command, const std::string& log_file, const EnvMap& env,
                                      const std::stop_token& stop) {
  boost::asio::io_context io;
  std::optional<int> status;
  ChildProcess hook(io, {"/bin/sh", "-c", command}, env, log_file, [&status](int s) { status = s; },
                    ChildProcess::Stdin::kNull, -1, ChildProcess::Log::kAppend);
  while (!status) {
    if (stop.stop_requested()) {
      hook.signal_group(SIGKILL);
      io.run_for(std::chrono::seconds(1));
      return std::nullopt;
    }
    io.run_for(std::chrono::milliseconds(100));
    io.restart();
  }
  return status;
}

}  // namespace paddle::launcher
