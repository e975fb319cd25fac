#include "ps/checkpoint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/checksum.h"
#include "common/error.h"
#include "common/file.h"

namespace paddle::ps {
namespace {

using common::DataError;
constexpr int kChecksumFormat = 2;  // the .bin ends with its checksum
constexpr int kFormat = 3;          // sparse rows of any accessor, save modes; the manifest names accessors
constexpr size_t kChecksumBytes = 4;

const char* accessor_name(const SparseTable& table) {
  return table.spec().accessor == SparseTableSpec::Accessor::kCtr ? "ctr" : "plain";
}

std::string base_path(const std::string& dir, int server_index) {
  return fmt::format("{}/ps-server-{}", dir, server_index);
}

void append_checksum(std::string& bytes) {
  const uint32_t crc = common::crc32(bytes);
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((crc >> (8 * i)) & 0xFF));
}

// The table bytes of FILE without their checksum, once it matches.
std::string_view checked_tables(std::string_view bytes, const std::string& file) {
  if (bytes.size() < kChecksumBytes) throw DataError(fmt::format("checkpoint {}: truncated before its checksum", file));
  const std::string_view tables = bytes.substr(0, bytes.size() - kChecksumBytes);
  uint32_t stored = 0;
  for (size_t i = 0; i < 4; ++i)
    stored |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[tables.size() + i])) << (8 * i);
  if (const uint32_t computed = common::crc32(tables); stored != computed)
    throw DataError(fmt::format("checkpoint {}: checksum mismatch (stored {:08x}, computed {:08x}): the file is "
                                "truncated or corrupted", file, stored, computed));
  return tables;
}

std::string read_whole_file(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw DataError(fmt::format("checkpoint {} is missing", file));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

// Non-const: operator[] gives null for a key the manifest lacks, where the const one would assert.
void check_manifest(nlohmann::json& manifest, const std::string& dir, const std::string& base,
                    const ServerTables& tables, int server_count) {
  if (manifest.value("server_count", -1) != server_count)
    throw DataError(fmt::format("checkpoint {} was saved by {} servers, this job has {}", dir,
                                         manifest.value("server_count", -1), server_count));
  if (manifest["dense"].size() != tables.dense.size() || manifest["sparse"].size() != tables.sparse.size())
    throw DataError(fmt::format("checkpoint {}.json lists other tables than this model's", base));
  for (size_t i = 0; i < tables.dense.size(); ++i)
    if (manifest["dense"][i].value("size", size_t{0}) != tables.dense[i]->size())
      throw DataError(fmt::format("checkpoint {}: dense table {} has {} values, the model {}", base, i,
                                           manifest["dense"][i].value("size", size_t{0}), tables.dense[i]->size()));
  for (size_t i = 0; i < tables.sparse.size(); ++i)
  {
    if (manifest["sparse"][i].value("dim", size_t{0}) != tables.sparse[i]->dim())
      throw DataError(fmt::format("checkpoint {}: sparse table {} has dim {}, the model {}", base, i,
                                           manifest["sparse"][i].value("dim", size_t{0}), tables.sparse[i]->dim()));
    const std::string accessor = manifest["sparse"][i].value("accessor", std::string("plain"));
    if (accessor != accessor_name(*tables.sparse[i]))
      throw DataError(fmt::format("checkpoint {}: sparse table {} is a {} table, the model's {}", base, i, accessor,
                                  accessor_name(*tables.sparse[i])));
  }
}

}  // namespace

void save_checkpoint(const std::string& dir, const ServerTables& tables, int server_index, int server_count,
                     SaveMode mode) {
  const std::string base = base_path(dir, server_index);
  nlohmann::json manifest;
  manifest["server_index"] = server_index;
  manifest["server_count"] = server_count;
  manifest["format"] = kFormat;
  manifest["mode"] = save_mode_name(mode);
  manifest["dense"] = nlohmann::json::array();
  manifest["sparse"] = nlohmann::json::array();
  std::ostringstream out;
  for (auto& t : tables.dense) {
    manifest["dense"].push_back({{"size", t->size()}});
    t->save(out);
  }
  for (auto& t : tables.sparse) {
    const auto start = out.tellp();
    t->save(out, mode);
    uint64_t rows = 0;  // the count the table wrote first
    std::memcpy(&rows, out.view().data() + static_cast<size_t>(start), sizeof rows);
    manifest["sparse"].push_back({{"dim", t->dim()}, {"accessor", accessor_name(*t)}, {"rows", rows}});
  }
  std::string bytes = std::move(out).str();
  append_checksum(bytes);
  common::write_file_atomically(base + ".bin", bytes);
  common::write_file_atomically(base + ".json", manifest.dump(2) + "\n");
}

SaveMode load_checkpoint(const std::string& dir, ServerTables& tables, int server_index, int server_count) {
  const std::string base = base_path(dir, server_index);
  std::ifstream manifest_file(base + ".json");
  if (!manifest_file) throw DataError(fmt::format("checkpoint {}.json is missing", base));
  nlohmann::json manifest = nlohmann::json::parse(manifest_file, nullptr, false);
  if (!manifest.is_object()) throw DataError(fmt::format("checkpoint {}.json is not a JSON object", base));
  int format = 1;
  bool accessor_rows = false;
  SaveMode mode = SaveMode::kAll;
  try {
    check_manifest(manifest, dir, base, tables, server_count);
    format = manifest.value("format", 1);
    // The rows' layout goes with the manifest naming each sparse table's accessor (format 3).
    for (auto& sparse : manifest["sparse"]) accessor_rows = accessor_rows || sparse.contains("accessor");
    mode = parse_save_mode(manifest.value("mode", std::string("all")));
  } catch (const std::invalid_argument& e) {
    throw DataError(fmt::format("checkpoint {}.json: {}", base, e.what()));
  } catch (const nlohmann::json::exception& e) {
    throw DataError(fmt::format("checkpoint {}.json: a value of the wrong type: {}", base, e.what()));
  }
  const std::string file = base + ".bin";
  const std::string bytes = read_whole_file(file);
  std::istringstream in(std::string(format >= kChecksumFormat ? checked_tables(bytes, file) : bytes));
  try {
    for (auto& t : tables.dense) t->load(in);
    for (auto& t : tables.sparse) {
      if (accessor_rows) t->load(in, mode == SaveMode::kDelta);
      else t->load_legacy(in);
    }
  } catch (const std::exception& e) {
    throw DataError(fmt::format("checkpoint {}: {}", file, e.what()));
  }
  if (in.peek() != std::char_traits<char>::eof())
    throw DataError(fmt::format("checkpoint {}: bytes after the last table (another model's file?)", file));
  return mode;
}

}  // namespace paddle::ps
