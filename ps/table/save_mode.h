#pragma once
// SaveMode: which sparse rows a checkpoint holds (ps/table/checkpoint.h). Dense tables go whole into
// every save.
//
//   kAll    every row
//   kBase   CTR tables: rows with score >= base_threshold; plain tables: every row
//   kDelta  rows touched since they were last saved; CTR tables: of those, the rows whose
//           delta_score (score pushed since) reaches delta_threshold
//
// A save clears the touched flag and delta_score of the rows it writes, so a row not written
// (below a threshold) keeps accumulating toward a later delta. Loading an all or base save
// replaces the tables; loading a delta upserts its rows (and replaces the dense tables).

#include <cstdint>
#include <string>

namespace paddle::ps {

enum class SaveMode : uint32_t { kAll = 0, kBase = 1, kDelta = 2 };

// "all", "base", "delta".
const char* save_mode_name(SaveMode mode);
// The inverse of save_mode_name; throws std::invalid_argument naming the name and the choices.
SaveMode parse_save_mode(const std::string& name);

}  // namespace paddle::ps
