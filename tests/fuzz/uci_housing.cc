// Fuzz target: the UCI housing reader (runtime/data/data_sources.h load_uci_housing), on the
// input as housing.data. Anything wrong must be a common::DataError naming file and line.

#include <cstdint>
#include <string>

#include "common/error.h"
#include "runtime/data/data_sources.h"
#include "tests/fuzz/scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const paddle::fuzz::ScratchDir scratch;
  scratch.write("housing.data", std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    paddle::runtime::load_uci_housing(scratch.path());
  } catch (const paddle::common::DataError&) {
  }
  return 0;
}
