#include "common/checksum.h"

#include <zlib.h>

namespace paddle::common {

uint32_t crc32(std::string_view bytes) {
  const auto* data = reinterpret_cast<const Bytef*>(bytes.data());
  return static_cast<uint32_t>(::crc32_z(::crc32_z(0, nullptr, 0), data, bytes.size()));
}

uint32_t crc32(uint32_t crc, std::string_view more) {
  return static_cast<uint32_t>(::crc32_z(crc, reinterpret_cast<const Bytef*>(more.data()), more.size()));
}

}  // namespace paddle::common
