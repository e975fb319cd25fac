#include <doctest/doctest.h>

#include "common/checksum.h"

using paddle::common::crc32;

TEST_CASE("crc32 is zlib's, the value Python's zlib.crc32 gives") {
  CHECK(crc32("") == 0u);
  CHECK(crc32("123456789") == 0xCBF43926u);  // the CRC-32 check value
  CHECK(crc32("PADDLE") != crc32("PADDLF"));
}
