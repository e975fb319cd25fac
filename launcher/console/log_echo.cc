#include "launcher/console/log_echo.h"

#include <algorithm>
#include <vector>

namespace paddle::launcher {

void LogEcho::poll() {
  write_lines(follower_.read_lines());
  std::fflush(out_);
}

void LogEcho::write_lines(std::string_view lines) {
  if (prefix_.empty()) {
    std::fwrite(lines.data(), 1, lines.size(), out_);
    return;
  }
  while (!lines.empty()) {
    const size_t end = lines.find('\n') + 1;
    std::fwrite(prefix_.data(), 1, prefix_.size(), out_);
    std::fwrite(lines.data(), 1, end, out_);
    lines.remove_prefix(end);
  }
}

void LogEcho::finish() {
  write_lines(follower_.read_lines(/*final=*/true));
  std::fflush(out_);
}

std::string last_lines(const std::string& path, int count) {
  std::FILE* in = std::fopen(path.c_str(), "re");
  if (in == nullptr) return {};
  constexpr long kWindow = 64 * 1024;
  std::fseek(in, 0, SEEK_END);
  long size = std::ftell(in);
  long start = std::max(0L, size - kWindow);
  std::fseek(in, start, SEEK_SET);
  std::string text(static_cast<size_t>(size - start), '\0');
  text.resize(std::fread(text.data(), 1, text.size(), in));
  std::fclose(in);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (text.empty()) return {};
  size_t pos = text.size();
  for (int i = 0; i < count && pos != std::string::npos && pos > 0; ++i) pos = text.rfind('\n', pos - 1);
  if (pos == std::string::npos) return text + "\n";
  return text.substr(pos == 0 && text[0] != '\n' ? 0 : pos + 1) + "\n";
}

}  // namespace paddle::launcher
