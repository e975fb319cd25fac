#pragma once
// LaunchLog: the launcher's own messages in Paddle's format,
//   LEVEL YYYY-MM-DD HH:MM:SS,mmm file:line] message
// on the console (stderr, as Python's logging does) and, once attached, in LOG_DIR/launch.log.

#include <cstdio>
#include <source_location>
#include <string>
#include <string_view>

namespace paddle::launcher {

class LaunchLog {
 public:
  explicit LaunchLog(std::FILE* console = stderr) : console_(console) {}
  ~LaunchLog();
  LaunchLog(const LaunchLog&) = delete;
  LaunchLog& operator=(const LaunchLog&) = delete;

  // From now on every message is also appended to `path`. Returns false when it can't be opened.
  bool attach_file(const std::string& path);

  // Only messages at `level` and above reach the console from now on (DEBUG, INFO, WARNING, ERROR,
  // CRITICAL; --log_level); the file keeps every one. INFO by default, where debug() is file-only.
  void set_console_level(std::string_view level);

  void debug(std::string_view message, std::source_location where = std::source_location::current());
  void info(std::string_view message, std::source_location where = std::source_location::current());
  void warning(std::string_view message, std::source_location where = std::source_location::current());
  void error(std::string_view message, std::source_location where = std::source_location::current());

  // Plain text (no prefix) on stdout and in the file: the Configuration Arguments block. Left off
  // the console, as an INFO message would be, below WARNING.
  void print(std::string_view text);

  // One formatted line, without writing it anywhere (for tests).
  static std::string format_line(std::string_view level, std::string_view message, std::source_location where);

 private:
  void write(std::string_view level, int rank, std::string_view message, std::source_location where);

  std::FILE* console_;
  std::FILE* file_ = nullptr;
  int console_rank_ = 20;  // Python logging's numbers: DEBUG 10 .. CRITICAL 50
};

}  // namespace paddle::launcher
