// Fuzz target: the IDX reader behind runtime/data/data_sources.h load_fashion_mnist. The input's
// first two bytes (little-endian) say how many of the rest are the image file; the remainder is
// the label file. Both are written uncompressed
// (zlib reads them as they are) as the training and the test pair. Anything wrong must be a
// common::DataError naming the file.

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "runtime/data/data_sources.h"
#include "tests/fuzz/scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const paddle::fuzz::ScratchDir scratch;
  if (size < 2) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);
  const size_t cut = std::min<size_t>(data[0] | (size_t{data[1]} << 8), rest.size());
  for (const char* set : {"train", "t10k"}) {
    scratch.write(std::string(set) + "-images-idx3-ubyte.gz", rest.substr(0, cut));
    scratch.write(std::string(set) + "-labels-idx1-ubyte.gz", rest.substr(cut));
  }
  try {
    paddle::runtime::load_fashion_mnist(scratch.path());
  } catch (const paddle::common::DataError&) {
  }
  return 0;
}
