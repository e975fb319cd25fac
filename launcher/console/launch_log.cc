#include "launcher/console/launch_log.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

namespace paddle::launcher {

LaunchLog::~LaunchLog() {
  if (file_ != nullptr) std::fclose(file_);
}

bool LaunchLog::attach_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "ae");
  if (f == nullptr) return false;
  if (file_ != nullptr) std::fclose(file_);
  file_ = f;
  return true;
}

std::string LaunchLog::format_line(std::string_view level, std::string_view message, std::source_location where) {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t seconds = system_clock::to_time_t(now);
  const auto millis = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &local);
  std::string_view file = where.file_name();
  if (auto slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  return fmt::format("{} {},{:03d} {}:{}] {}\n", level, stamp, millis, file, where.line(), message);
}

void LaunchLog::set_console_level(std::string_view level) {
  constexpr std::pair<std::string_view, int> kRanks[] = {{"DEBUG", 10}, {"INFO", 20}, {"WARNING", 30}, {"ERROR", 40}, {"CRITICAL", 50}};
  for (const auto& [name, rank] : kRanks)
    if (name == level) console_rank_ = rank;
}

void LaunchLog::write(std::string_view level, int rank, std::string_view message, std::source_location where) {
  const std::string line = format_line(level, message, where);
  if (rank >= console_rank_) {
    std::fputs(line.c_str(), console_);
    std::fflush(console_);
  }
  if (file_ != nullptr) {
    std::fputs(line.c_str(), file_);
    std::fflush(file_);
  }
}

void LaunchLog::debug(std::string_view message, std::source_location where) { write("DEBUG", 10, message, where); }
void LaunchLog::info(std::string_view message, std::source_location where) { write("INFO", 20, message, where); }
void LaunchLog::warning(std::string_view message, std::source_location where) { write("WARNING", 30, message, where); }
void LaunchLog::error(std::string_view message, std::source_location where) { write("ERROR", 40, message, where); }

void LaunchLog::print(std::string_view text) {
  if (console_rank_ <= 20) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  if (file_ != nullptr) {
    std::fwrite(text.data(), 1, text.size(), file_);
    std::fflush(file_);
  }
}

}  // namespace paddle::launcher
