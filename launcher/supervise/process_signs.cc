#include "launcher/supervise/process_signs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/process/args.hpp>
#include <boost/process/async.hpp>
#include <boost/process/child.hpp>
#include <boost/process/io.hpp>
#include <boost/process/search_path.hpp>
#include <boost/process/start_dir.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>
#include <sstream>

#include "common/file.h"
#include "common/progress_page.h"
#include "launcher/supervise/hang_verdict.h"

namespace paddle::launcher {

std::optional<ProcessSigns> read_process_signs(pid_t pid, const std::string& log_file, const std::string& page_file) {
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
  static const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  signs.cpu_seconds = static_cast<double>(utime + stime) / ticks_per_second;
  std::error_code ec;
  const auto size = std::filesystem::file_size(log_file, ec);
  signs.log_bytes = ec ? 0 : size;
  if (!page_file.empty()) signs.page = common::read_progress_page(page_file);
  return signs;
}

std::string kernel_wait_channel(pid_t pid) {
  const auto wchan = common::read_file(fmt::format("/proc/{}/wchan", pid));
  return wchan && *wchan != "0" ? *wchan : "";
}

namespace {

// `tool ARGS`'s output, or a line saying why there is none ("no WHAT: ..."). Its output goes to a
// file and its end is polled for: this runs on a thread of its own, beside the supervisor's
// io_context, and no SIGCHLD handling is shared with it. A tool past its time gets SIGTERM, on
// which a debugger detaches (a SIGKILLed one may leave its process stopped), then SIGKILL.
Stacks run_tool(const boost::filesystem::path& tool, const std::vector<std::string>& args, const std::string& what,
                std::chrono::seconds timeout) {
  namespace bp = boost::process;
  constexpr auto kDetachTime = std::chrono::seconds(2);
  const std::string command = fmt::format("{} {}", tool.filename().string(), fmt::join(args, " "));
  char name[] = "/tmp/paddle-launch-stacks-XXXXXX";
  const int fd = ::mkstemp(name);
  if (fd < 0) return {false, fmt::format("no {}: cannot make a file for {}'s output\n", what, command)};
  ::close(fd);
  const auto read_and_remove = [&] {
    std::string text = common::read_file(name).value_or("");
    std::filesystem::remove(name);
    return text;
  };
  const auto wait_until = [](bp::child& child, std::chrono::steady_clock::time_point deadline) {
    while (child.running() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return !child.running();
  };
  try {
    bp::child child(tool, bp::args(args), bp::std_in < bp::null, (bp::std_out & bp::std_err) > std::string(name));
    if (!wait_until(child, std::chrono::steady_clock::now() + timeout)) {
      ::kill(child.id(), SIGTERM);
      if (!wait_until(child, std::chrono::steady_clock::now() + kDetachTime)) child.terminate();
      child.wait();
      read_and_remove();
      return {false, fmt::format("no {}: {} took over {} s\n", what, command, timeout.count())};
    }
    child.wait();
    std::string text = read_and_remove();
    if (child.exit_code() != 0) return {false, fmt::format("no {}: {} failed ({}): {}", what, command, child.exit_code(), text)};
    return {true, std::move(text)};
  } catch (const std::exception& e) {
    read_and_remove();
    return {false, fmt::format("no {}: {} could not run: {}\n", what, command, e.what())};
  }
}

}  // namespace

std::string kernel_stack(pid_t pid) {
  return common::read_file(fmt::format("/proc/{}/stack", pid)).value_or("");
}

std::string describe_live_state(pid_t pid) {
  const auto signs = read_process_signs(pid, "");
  if (!signs) return "";
  std::string text = describe_process_state(signs->state);
  if (const std::string wait = kernel_wait_channel(pid); !wait.empty()) text += " in " + wait;
  if (std::string stack = kernel_stack(pid); !stack.empty()) {
    std::replace(stack.begin(), stack.end(), '\n', ' ');
    text += "; kernel stack: " + stack;
  }
  return text;
}

Stacks native_stacks(pid_t pid, std::chrono::seconds timeout) {
  const auto gdb = boost::process::search_path("gdb");
  if (gdb.empty()) return {false, "no native stacks: gdb is not on PATH (Debian's package gdb)\n"};
  return run_tool(gdb, {"-p", std::to_string(pid), "-batch", "-nx", "-iex", "set auto-load off", "-ex", "set pagination off", "-ex", "thread apply all bt"},
                  "native stacks", timeout);
}

std::optional<Stacks> python_stacks(pid_t pid, const std::vector<std::string>& search_path, std::chrono::seconds timeout) {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink(fmt::format("/proc/{}/exe", pid), ec);
  if (ec || !exe.filename().string().starts_with("python")) return std::nullopt;
  std::vector<boost::filesystem::path> dirs(search_path.begin(), search_path.end());
  const auto py_spy = boost::process::search_path("py-spy", dirs);
  if (py_spy.empty())
    return Stacks{false, fmt::format("no Python frames: py-spy is not installed (pip install py-spy, in the program's "
                                     "venv or on PATH); looked in {}\n", fmt::join(search_path, ":"))};
  return run_tool(py_spy, {"dump", "--native", "--pid", std::to_string(pid)}, "Python frames", timeout);
}

}  // namespace paddle::launcher
