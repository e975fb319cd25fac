#include "launcher/console/log_follower.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

namespace paddle::launcher {
namespace {

// Counts the lines of [from, to) of `in` without keeping them; leaves `in` at `to`.
uint64_t count_lines(std::FILE* in, long from, long to) {
  std::fseek(in, from, SEEK_SET);
  uint64_t lines = 0;
  char buffer[65536];
  for (long left = to - from; left > 0;) {
    const size_t n = std::fread(buffer, 1, static_cast<size_t>(std::min<long>(left, sizeof buffer)), in);
    if (n == 0) break;
    lines += static_cast<uint64_t>(std::count(buffer, buffer + n, '\n'));
    left -= static_cast<long>(n);
  }
  return lines;
}

}  // namespace

std::string LogFollower::read_lines(bool final) {
  std::string lines;
  std::FILE* in = std::fopen(path_.c_str(), "re");
  if (in == nullptr) return lines;
  struct stat st {};
  if (::fstat(fileno(in), &st) == 0 && st.st_size < offset_) {  // truncated or replaced: start over
    offset_ = 0;
    partial_.clear();
  }
  if (::fstat(fileno(in), &st) == 0 && static_cast<uint64_t>(st.st_size - offset_) > max_lag_) {
    // Too far behind: drop the oldest, keeping the newest half of max_lag from a line's start.
    const long resume = static_cast<long>(st.st_size - static_cast<long>(max_lag_ / 2));
    // The lines ending before `resume` (the first of them begun in partial_), and the one cut there.
    skipped_lines_ += count_lines(in, offset_, resume) + 1;
    partial_.clear();
    int c;
    long at = resume;
    while ((c = std::fgetc(in)) != EOF && c != '\n') ++at;
    offset_ = c == EOF ? at : at + 1;
  }
  if (std::fseek(in, offset_, SEEK_SET) == 0) {
    char buffer[65536];
    size_t n;
    uint64_t budget = max_lag_;
    while (budget > 0 && (n = std::fread(buffer, 1, std::min<uint64_t>(sizeof buffer, budget), in)) > 0) {
      offset_ += static_cast<long>(n);
      budget -= n;
      partial_.append(buffer, n);
      const size_t end = partial_.rfind('\n');
      if (end != std::string::npos) {
        lines.append(partial_, 0, end + 1);
        partial_.erase(0, end + 1);
      }
    }
  }
  std::fclose(in);
  if (final && !partial_.empty()) {
    lines += partial_ + '\n';
    partial_.clear();
  }
  return lines;
}

}  // namespace paddle::launcher
