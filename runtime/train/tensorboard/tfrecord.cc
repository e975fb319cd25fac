#include "runtime/train/tensorboard/tfrecord.h"

#include <boost/crc.hpp>

namespace paddle::tensorboard {
namespace {

void append_little_endian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

}  // namespace

uint32_t crc32c(std::string_view data) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(data.data(), data.size());
  return crc.checksum();
}

uint32_t masked_crc32c(std::string_view data) {
  const uint32_t crc = crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string frame_record(std::string_view data) {
  std::string record;
  record.reserve(data.size() + 16);
  append_little_endian(record, data.size(), 8);
  append_little_endian(record, masked_crc32c(record), 4);
  record.append(data);
  append_little_endian(record, masked_crc32c(data), 4);
  return record;
}

}  // namespace paddle::tensorboard
