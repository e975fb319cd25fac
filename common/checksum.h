#pragma once
// The checksum of the files we write and read back (checkpoints, PS shards): CRC-32 as zlib
// computes it (zlib's crc32, polynomial 0xEDB88320; Python's zlib.crc32 gives the same value), so
// that a reader can tell a truncated or bit-flipped file from a good one before it trusts a value.

#include <cstdint>
#include <string_view>

namespace paddle::common {

uint32_t crc32(std::string_view bytes);
// The CRC-32 of the bytes before and `more` after them, given `crc` of the bytes before: a
// checksum taken piece by piece as a file streams by. crc32(crc32(a), b) == crc32(a + b).
uint32_t crc32(uint32_t crc, std::string_view more);

}  // namespace paddle::common
