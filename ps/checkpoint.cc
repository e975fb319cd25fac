#include "ps/checkpoint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/file.h"

namespace paddle::ps {
namespace {

std::string base_path(const std::string& dir, int server_index) {
  return fmt::format("{}/ps-server-{}", dir, server_index);
}

// Non-const: operator[] gives null for a key the manifest lacks, where the const one would assert.
void check_manifest(nlohmann::json& manifest, const std::string& dir, const std::string& base,
                    const ServerTables& tables, int server_count) {
  if (manifest.value("server_count", -1) != server_count)
    throw std::runtime_error(fmt::format("checkpoint {} was saved by {} servers, this job has {}", dir,
                                         manifest.value("server_count", -1), server_count));
  if (manifest["dense"].size() != tables.dense.size() || manifest["sparse"].size() != tables.sparse.size())
    throw std::runtime_error(fmt::format("checkpoint {}.json lists other tables than this model's", base));
  for (size_t i = 0; i < tables.dense.size(); ++i)
    if (manifest["dense"][i].value("size", size_t{0}) != tables.dense[i]->size())
      throw std::runtime_error(fmt::format("checkpoint {}: dense table {} has {} values, the model {}", base, i,
                                           manifest["dense"][i].value("size", size_t{0}), tables.dense[i]->size()));
  for (size_t i = 0; i < tables.sparse.size(); ++i)
    if (manifest["sparse"][i].value("dim", size_t{0}) != tables.sparse[i]->dim())
      throw std::runtime_error(fmt::format("checkpoint {}: sparse table {} has dim {}, the model {}", base, i,
                                           manifest["sparse"][i].value("dim", size_t{0}), tables.sparse[i]->dim()));
}

}  // namespace

void save_checkpoint(const std::string& dir, const ServerTables& tables, int server_index, int server_count) {
  const std::string base = base_path(dir, server_index);
  nlohmann::json manifest;
  manifest["server_index"] = server_index;
  manifest["server_count"] = server_count;
  manifest["dense"] = nlohmann::json::array();
  manifest["sparse"] = nlohmann::json::array();
  std::ostringstream out;
  for (auto& t : tables.dense) {
    manifest["dense"].push_back({{"size", t->size()}});
    t->save(out);
  }
  for (auto& t : tables.sparse) {
    manifest["sparse"].push_back({{"dim", t->dim()}, {"rows", t->rows()}});
    t->save(out);
  }
  common::write_file_atomically(base + ".bin", out.view());
  common::write_file_atomically(base + ".json", manifest.dump(2) + "\n");
}

void load_checkpoint(const std::string& dir, ServerTables& tables, int server_index, int server_count) {
  const std::string base = base_path(dir, server_index);
  std::ifstream manifest_file(base + ".json");
  if (!manifest_file) throw std::runtime_error(fmt::format("checkpoint {}.json is missing", base));
  nlohmann::json manifest = nlohmann::json::parse(manifest_file, nullptr, false);
  if (manifest.is_discarded()) throw std::runtime_error(fmt::format("checkpoint {}.json is not JSON", base));
  check_manifest(manifest, dir, base, tables, server_count);
  std::ifstream in(base + ".bin", std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("checkpoint {}.bin is missing", base));
  try {
    for (auto& t : tables.dense) t->load(in);
    for (auto& t : tables.sparse) t->load(in);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("checkpoint {}.bin: {}", base, e.what()));
  }
}

}  // namespace paddle::ps
