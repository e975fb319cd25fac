#include "runtime/train/tensorboard/tfrecord.h"

#include <doctest/doctest.h>

#include <string>

using namespace paddle::tensorboard;

namespace {

std::string bytes(std::initializer_list<unsigned> values) {
  std::string out;
  for (unsigned v : values) out.push_back(static_cast<char>(v));
  return out;
}

}  // namespace

TEST_CASE("CRC-32C is Castagnoli's: the check value of \"123456789\", and masked as TFRecord masks it") {
  CHECK(crc32c("123456789") == 0xE3069283u);
  CHECK(masked_crc32c("123456789") == 0xC78AB0E5u);
  CHECK(crc32c("") == 0u);
}

TEST_CASE("a record is its length, the length's masked CRC, the data and the data's masked CRC, little-endian") {
  CHECK(frame_record("abc") == bytes({0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // length 3
                                      0xb0, 0x99, 0x49, 0x0e,                          // masked CRC of the length
                                      'a', 'b', 'c',                                   // data
                                      0x6e, 0x57, 0xf1, 0x21}));                       // masked CRC of the data
  const std::string empty = frame_record("");
  CHECK(empty.size() == 16);
  CHECK(empty.substr(0, 8) == std::string(8, '\0'));
}
