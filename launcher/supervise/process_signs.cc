#include "launcher/supervise/process_signs.h"

#include <fmt/format.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/process/args.hpp>
#include <boost/process/async.hpp>
#include <boost/process/child.hpp>
#include <boost/process/io.hpp>
#include <boost/process/search_path.hpp>
#include <boost/process/start_dir.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "common/file.h"

namespace paddle::launcher {

std::optional<ProcessSigns> read_process_signs(pid_t pid, const std::string& log_file) {
  const auto stat = common::read_file(fmt::format("/proc/{}/stat", pid));
  if (!stat) return std::nullopt;
  // The command name, field 2, is in parentheses and may hold spaces: read after the last ')'.
  const auto close = stat->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat->substr(close + 2));
  ProcessSigns signs;
  std::string skip;
  rest >> signs.state;
  for (int field = 4; field <= 13; ++field) rest >> skip;  // ppid .. cmajflt
  unsigned long long utime = 0, stime = 0;
  rest >> utime >> stime;
  signs.cpu_ticks = utime + stime;
  std::error_code ec;
  const auto size = std::filesystem::file_size(log_file, ec);
  signs.log_bytes = ec ? 0 : size;
  return signs;
}

std::string kernel_wait_channel(pid_t pid) {
  const auto wchan = common::read_file(fmt::format("/proc/{}/wchan", pid));
  return wchan && *wchan != "0" ? *wchan : "";
}

std::string native_stacks(pid_t pid, std::chrono::seconds timeout) {
  namespace bp = boost::process;
  const auto gdb = bp::search_path("gdb");
  if (gdb.empty()) return "no native stacks: gdb is not on PATH (Debian's package gdb)\n";
  try {
    boost::asio::io_context io;
    std::future<std::string> out;
    bp::child child(gdb, bp::args({"-p", std::to_string(pid), "-batch", "-nx", "-ex", "set pagination off", "-ex",
                                   "thread apply all bt"}),
                    bp::std_in.close(), (bp::std_out & bp::std_err) > out, io);
    io.run_for(timeout);
    if (child.running()) {
      child.terminate();
      return fmt::format("no native stacks: gdb -p {} took over {} s\n", pid, timeout.count());
    }
    child.wait();
    return out.get();
  } catch (const std::exception& e) {
    return fmt::format("no native stacks: gdb -p {} could not run: {}\n", pid, e.what());
  }
}

}  // namespace paddle::launcher
