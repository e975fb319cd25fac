// Fuzz target: the PaddleRec slot reader (runtime/data/criteo.h load_criteo_slot), on the input as
// one data file. Anything wrong must be a common::DataError naming file and line; what loads
// must hold 13 dense features and 26 keys per label.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "runtime/data/criteo.h"
#include "tests/fuzz/scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const paddle::fuzz::ScratchDir scratch;
  const auto file = scratch.write("data.txt", std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    const auto d = paddle::runtime::load_criteo_slot(file, 1000);
    if (d.dense.size() != d.size() * paddle::runtime::kCriteoDense ||
        d.sparse.size() != d.size() * paddle::runtime::kCriteoSlots)
      std::abort();  // every sample has its 13 features and 26 keys
  } catch (const paddle::common::DataError&) {
  }
  return 0;
}
