#pragma once
// A checkpoint of one server's share of the tables, as PROTOCOL.md's SAVE writes it and LOAD
// (or a server's init_server(dir)) reads it back: DIR/ps-server-I.json, a manifest with the
// server's index, the job's server count, the save mode ("all", "base" or "delta",
// ps/table/save_mode.h), every dense table's size and every sparse table's dim, accessor and row count,
// and "format": 3; and DIR/ps-server-I.bin, the tables' values in table order, dense tables
// first (whole in every mode), then the sparse rows the mode selects (ps/table/sparse_table.h), then
// 4 bytes: the CRC-32 (common/checksum.h) of every byte before them, little-endian. Formats 1
// (no checksum, no "format") and 2 (plain rows of ps/wire/PROTOCOL.md's older layout) still load.
//
// Loading an all or base save replaces the tables; a delta save replaces the dense tables and
// upserts its sparse rows, so base, then each delta in order, rebuilds the tables of an all
// save taken with the last delta. The directory layout above DIR is the caller's.
//
// Each file is replaced whole (common/file.h), the .bin first, and the .bin checks itself, so a
// server killed between the two leaves a pair that loads: the manifest's sizes and dims are the
// model's, the same in both. A truncated or bit-flipped .bin is refused before a value is used.
//
// A share only fits the same cut, so loading checks the server count and every size and dim
// before it reads a value. LocalParameterStore, the tables of a single process, reads and writes
// the files of server 0 of 1: those of a one-server job.

#include <string>

#include "ps/table/save_mode.h"
#include "ps/table/tables.h"

namespace paddle::ps {

// Replaces both files atomically (the manifest last); throws common::DataError naming a file it
// cannot write.
void save_checkpoint(const std::string& dir, const ServerTables& tables, int server_index, int server_count,
                     SaveMode mode = SaveMode::kAll);

// Checks, loading nothing, that the save in DIR is whole for SERVER_COUNT servers: each
// DIR/ps-server-I.json is a manifest of that many servers, and each .bin's checksum matches (the
// formats before 2 have none). Throws common::DataError naming the first file at fault. A worker
// that reaches the save directory calls it before it has the servers load anything, so that a
// damaged save is refused whole, never half loaded by the servers whose shares are sound.
void verify_checkpoint(const std::string& dir, int server_count);

// Throws common::DataError naming the file for a missing, truncated, corrupted or mismatched
// checkpoint. Returns the checkpoint's mode.
SaveMode load_checkpoint(const std::string& dir, ServerTables& tables, int server_index, int server_count);

}  // namespace paddle::ps
