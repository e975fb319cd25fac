// Fuzz target: a parameter server's shard loader (ps/table/checkpoint.h load_checkpoint), for server
// 0 of 1 with two dense tables (3 and 5 values) and two sparse tables (dims 2 and 1) under
// Adagrad. The input up to its first NUL byte is ps-server-0.json, the rest ps-server-0.bin;
// when the input's first byte is odd the .bin gets its CRC-32 appended, so the table decoding
// behind the checksum is reached. Anything wrong must be a common::DataError.

#include <cstdint>
#include <string>

#include "common/checksum.h"
#include "common/error.h"
#include "ps/table/checkpoint.h"
#include "ps/table_spec.h"
#include "tests/fuzz/scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const paddle::fuzz::ScratchDir scratch;
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t nul = input.find('\0');
  if (nul == std::string_view::npos) return 0;
  std::string bin(input.substr(nul + 1));
  if (data[0] & 1) {
    const uint32_t crc = paddle::common::crc32(bin);
    for (int i = 0; i < 4; ++i) bin.push_back(static_cast<char>((crc >> (8 * i)) & 0xFF));
  }
  scratch.write("ps-server-0.json", input.substr(0, nul));
  scratch.write("ps-server-0.bin", bin);
  paddle::ps::TableSpecs specs;
  specs.dense = {{"a", 3}, {"b", 5}};
  specs.sparse = {{"e", 2, 7}, {"w", 1, 9}};
  specs.update_rule = paddle::common::OptimizerKind::kAdagrad;
  auto tables = paddle::ps::build_server_tables(specs, 0, 1);
  try {
    paddle::ps::load_checkpoint(scratch.path(), tables, 0, 1);
  } catch (const paddle::common::DataError&) {
  }
  return 0;
}
