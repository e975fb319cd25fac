#include "ps/table/checkpoint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/atomic_file.h"
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

// The size of FILE without its checksum, once the checksum matches the bytes before it (read
// in pieces, so that checking a file of gigabytes takes no more memory than a piece).
uint64_t checked_size(const std::string& file) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) throw DataError(fmt::format("checkpoint {} is missing", file));
  const auto size = static_cast<uint64_t>(in.tellg());
  if (size < kChecksumBytes) throw DataError(fmt::format("checkpoint {}: truncated before its checksum", file));
  in.seekg(0);
  std::vector<char> piece(1 << 20);
  uint32_t computed = common::crc32(std::string_view());
  for (uint64_t left = size - kChecksumBytes; left > 0;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(left, piece.size()));
    if (!in.read(piece.data(), static_cast<std::streamsize>(n))) throw DataError(fmt::format("checkpoint {}: cannot read", file));
    computed = common::crc32(computed, std::string_view(piece.data(), n));
    left -= n;
  }
  unsigned char bytes[kChecksumBytes];
  if (!in.read(reinterpret_cast<char*>(bytes), kChecksumBytes)) throw DataError(fmt::format("checkpoint {}: cannot read", file));
  uint32_t stored = 0;
  for (size_t i = 0; i < kChecksumBytes; ++i) stored |= static_cast<uint32_t>(bytes[i]) << (8 * i);
  if (stored != computed)
    throw DataError(fmt::format("checkpoint {}: checksum mismatch (stored {:08x}, computed {:08x}): the file is "
                                "truncated or corrupted", file, stored, computed));
  return size - kChecksumBytes;
}

uint64_t file_size(const std::string& file) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) throw DataError(fmt::format("checkpoint {} is missing", file));
  return size;
}

// The manifest BASE.json as a JSON object; throws DataError naming it when missing or not one.
nlohmann::json read_manifest(const std::string& base) {
  const std::optional<std::string> text = common::read_file(base + ".json");
  if (!text) throw DataError(fmt::format("checkpoint {}.json is missing", base));
  nlohmann::json manifest = nlohmann::json::parse(*text, nullptr, false);
  if (!manifest.is_object()) throw DataError(fmt::format("checkpoint {}.json is not a JSON object", base));
  return manifest;
}

// The whole number at `key` of a manifest object; `absent` when it has none. Throws
// std::invalid_argument naming the key when the value is not a whole number T holds: a float
// (1e45, say) would be undefined behaviour to convert, as json's own value() does.
template <typename T>
T whole_number(const nlohmann::json& object, const char* key, T absent) {
  if (!object.is_object() || !object.contains(key)) return absent;
  const nlohmann::json& value = object[key];
  if (value.is_number_unsigned() && std::in_range<T>(value.get<uint64_t>())) return static_cast<T>(value.get<uint64_t>());
  if (value.is_number_integer() && std::in_range<T>(value.get<int64_t>())) return static_cast<T>(value.get<int64_t>());
  throw std::invalid_argument(fmt::format("\"{}\" is {}, not a whole number", key, value.dump()));
}

// Non-const: operator[] gives null for a key the manifest lacks, where the const one would assert.
void check_manifest(nlohmann::json& manifest, const std::string& dir, const std::string& base,
                    const ServerTables& tables, int server_count) {
  if (const int saved_by = whole_number(manifest, "server_count", -1); saved_by != server_count)
    throw DataError(fmt::format("checkpoint {} was saved by {} servers, this job has {}", dir, saved_by, server_count));
  if (manifest["dense"].size() != tables.dense.size() || manifest["sparse"].size() != tables.sparse.size())
    throw DataError(fmt::format("checkpoint {}.json lists other tables than this model's", base));
  for (size_t i = 0; i < tables.dense.size(); ++i)
    if (const size_t size = whole_number(manifest["dense"][i], "size", size_t{0}); size != tables.dense[i]->size())
      throw DataError(fmt::format("checkpoint {}: dense table {} has {} values, the model {}", base, i, size,
                                  tables.dense[i]->size()));
  for (size_t i = 0; i < tables.sparse.size(); ++i)
  {
    if (const size_t dim = whole_number(manifest["sparse"][i], "dim", size_t{0}); dim != tables.sparse[i]->dim())
      throw DataError(fmt::format("checkpoint {}: sparse table {} has dim {}, the model {}", base, i, dim,
                                  tables.sparse[i]->dim()));
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
  common::AtomicFile bin(base + ".bin");  // streamed: a table of tens of millions of rows is not copied in memory
  for (auto& t : tables.dense) {
    manifest["dense"].push_back({{"size", t->size()}});
    t->save(bin.stream());
  }
  for (auto& t : tables.sparse) {
    const uint64_t rows = t->save(bin.stream(), mode);
    manifest["sparse"].push_back({{"dim", t->dim()}, {"accessor", accessor_name(*t)}, {"rows", rows}});
  }
  bin.append_checksum();
  bin.commit();
  common::write_file_atomically(base + ".json", manifest.dump(2) + "\n");
}

void verify_checkpoint(const std::string& dir, int server_count) {
  for (int i = 0; i < server_count; ++i) {
    const std::string base = base_path(dir, i);
    const nlohmann::json manifest = read_manifest(base);
    int saved_by = -1, format = 1;
    try {
      saved_by = whole_number(manifest, "server_count", -1);
      format = whole_number(manifest, "format", 1);
    } catch (const std::invalid_argument& e) {
      throw DataError(fmt::format("checkpoint {}.json: {}", base, e.what()));
    }
    if (saved_by != server_count)
      throw DataError(fmt::format("checkpoint {} was saved by {} servers, this job has {}", dir, saved_by, server_count));
    if (format >= kChecksumFormat)
      checked_size(base + ".bin");
    else
      file_size(base + ".bin");  // no checksum to check: as the load does, trust what is there
  }
}

SaveMode load_checkpoint(const std::string& dir, ServerTables& tables, int server_index, int server_count) {
  const std::string base = base_path(dir, server_index);
  nlohmann::json manifest = read_manifest(base);
  int format = 1;
  bool accessor_rows = false;
  SaveMode mode = SaveMode::kAll;
  try {
    check_manifest(manifest, dir, base, tables, server_count);
    format = whole_number(manifest, "format", 1);
    // The rows' layout goes with the manifest naming each sparse table's accessor (format 3).
    for (auto& sparse : manifest["sparse"]) accessor_rows = accessor_rows || sparse.contains("accessor");
    mode = parse_save_mode(manifest.value("mode", std::string("all")));
  } catch (const std::invalid_argument& e) {
    throw DataError(fmt::format("checkpoint {}.json: {}", base, e.what()));
  } catch (const nlohmann::json::exception& e) {
    throw DataError(fmt::format("checkpoint {}.json: a value of the wrong type: {}", base, e.what()));
  }
  const std::string file = base + ".bin";
  const uint64_t tables_size = format >= kChecksumFormat ? checked_size(file) : file_size(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) throw DataError(fmt::format("checkpoint {} is missing", file));
  try {
    for (auto& t : tables.dense) t->load(in);
    for (auto& t : tables.sparse) {
      if (accessor_rows) t->load(in, mode == SaveMode::kDelta);
      else t->load_legacy(in);
    }
  } catch (const std::exception& e) {
    throw DataError(fmt::format("checkpoint {}: {}", file, e.what()));
  }
  if (static_cast<uint64_t>(in.tellg()) != tables_size)
    throw DataError(fmt::format("checkpoint {}: bytes after the last table (another model's file?)", file));
  return mode;
}

}  // namespace paddle::ps
