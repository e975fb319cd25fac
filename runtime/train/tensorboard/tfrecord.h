#pragma once
// TFRecord framing, the container of TensorBoard's event files. Each record is
//
//   uint64 length (little-endian)   uint32 masked CRC-32C of those 8 bytes
//   `length` bytes of data          uint32 masked CRC-32C of the data
//
// where masking rotates the CRC right by 15 bits and adds 0xa282ead8 (so that a CRC of data
// holding CRCs does not look like one). The CRC-32C (Castagnoli) is Boost.CRC's.

#include <cstdint>
#include <string>
#include <string_view>

namespace paddle::tensorboard {

uint32_t crc32c(std::string_view data);
uint32_t masked_crc32c(std::string_view data);

// `data` as one framed record.
std::string frame_record(std::string_view data);

}  // namespace paddle::tensorboard
