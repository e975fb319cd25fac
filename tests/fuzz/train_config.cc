// Fuzz target: the training configuration (runtime/train/config/train_config.h load_train_config): a
// config file overlaid on the defaults, then `--set key=value` overrides. The input up to its
// first NUL byte is the config file (none when empty); each line after it is one override.
// Anything wrong must be a common::Error naming the key or the file.

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/train/config/train_config.h"
#include "tests/fuzz/scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const paddle::fuzz::ScratchDir scratch;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view file = input.substr(0, nul);
  std::vector<std::string> overrides;
  if (nul != std::string_view::npos) {
    std::string_view rest = input.substr(nul + 1);
    while (!rest.empty()) {
      const size_t end = rest.find('\n');
      overrides.emplace_back(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
  }
  try {
    const auto config = paddle::runtime::load_train_config(file.empty() ? "" : scratch.write("config.json", file),
                                                           overrides);
    config.strategy();
  } catch (const paddle::common::Error&) {
  }
  return 0;
}
