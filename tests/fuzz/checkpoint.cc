// Fuzz target: the training checkpoint decoder (runtime/nn/checkpoint.h parse_checkpoint). When
// the input's first byte is odd, the rest gets its CRC-32 appended, so the decoding behind the
// checksum is reached; otherwise the rest is decoded as it is. Anything but a well-formed file
// must be a CheckpointError.

#include <cstdint>
#include <string>

#include "common/checksum.h"
#include "runtime/nn/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] & 1) {
    const uint32_t crc = paddle::common::crc32(bytes);
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((crc >> (8 * i)) & 0xFF));
  }
  try {
    paddle::runtime::parse_checkpoint(bytes, "fuzz.bin");
  } catch (const paddle::runtime::CheckpointError&) {
  }
  return 0;
}
