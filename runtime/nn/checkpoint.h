#pragma once
// Checkpoints: a model's parameters and buffers and its optimizer's state, saved by rank 0 at the
// end of each epoch and loaded to resume.
//
// File format (OUTPUT_DIR/checkpoint-EPOCH.bin, OUTPUT_DIR/latest names the newest):
//   line 1: "PADDLE-LAUNCH-CHECKPOINT 2"
//   line 2: JSON header {"epoch": completed epochs, "step": global step, "tensors":
//           [{"name": ..., "count": floats}, ...], optionally "history": [{figures of a round}, ...]}
//   then the tensors' float32 values, little-endian, in header order;
//   then 4 bytes: the CRC-32 (common/checksum.h) of every byte before them, little-endian.
// Version 1, written before the checksum, is the same without its last 4 bytes and still loads.
// Parameters are named by the model ("conv1.w"), buffers likewise ("bn1.mean"), optimizer state
// "KIND/PARAM" ("velocity/conv1.w").
//
// Checkpoints hold float32 only. A mixed-precision model at O2 keeps 16-bit parameters, and its
// optimizer their float32 master weights as state "master/PARAM" (master_weights_name): the file
// stores the master weights under the parameter's name and no rounded copy, so it is an ordinary
// float32 checkpoint. A float32 model, on the CPU or anywhere, loads it as any other; a model
// with 16-bit parameters gets its master weights back exactly and its parameters rounded from
// them. A 16-bit parameter without master weights is stored widened to float32 (exact).
//
// A checkpoint is written whole or not at all (common/file.h), and `latest` is replaced only
// after it, so a process killed mid-write or a full disk leaves `latest` naming the previous,
// complete checkpoint. Reading trusts nothing in the file: every count is checked against the
// bytes really there before anything is allocated, and the checksum before any value is used.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "runtime/nn/optimizer.h"
#include "runtime/nn/sequential.h"

namespace paddle::runtime {

class CheckpointError : public common::DataError {
 public:
  using common::DataError::DataError;
};

// A whole checkpoint of a newer format than this build reads: not damage, so no older
// checkpoint is loaded in its place (the run would later overwrite it).
class CheckpointVersionError : public CheckpointError {
 public:
  using CheckpointError::CheckpointError;
};

struct CheckpointPosition {
  int64_t rounds = 0;  // rounds (epochs, or online passes) completed
  int64_t step = 0;   // optimizer steps taken
  // The figures of each round done (metrics.json's "history"), kept in the header so that a run
  // resumed, even at its very end, reports the whole run; null when not recorded.
  nlohmann::json history = nullptr;
};

// The optimizer-state name of PARAM's float32 master weights: "master/PARAM".
std::string master_weights_name(const std::string& param);

// Writes OUTPUT_DIR/FILE_NAME atomically (temporary file, then rename); with update_latest,
// OUTPUT_DIR/latest then names it. FILE_NAME defaults to checkpoint-EPOCH.bin.
void save_checkpoint(const std::string& output_dir, const CheckpointPosition& at, Sequential& model,
                     Optimizer& optimizer, std::string file_name = "", bool update_latest = true);

// What a checkpoint file holds, in file order.
struct CheckpointContents {
  CheckpointPosition at;
  std::vector<std::pair<std::string, std::vector<float>>> tensors;
};

// Decodes the bytes of the checkpoint FILE (named in errors only). Throws a one-line
// CheckpointError naming FILE and what is wrong for anything but a well-formed file whose
// checksum matches; never allocates more than the bytes given.
CheckpointContents parse_checkpoint(std::string_view bytes, const std::string& file);

// What load_latest_checkpoint loaded, and the damaged checkpoints it refused on the way.
struct LoadedCheckpoint {
  CheckpointPosition at;
  std::string file;                  // the file loaded, in OUTPUT_DIR
  std::vector<std::string> refused;  // "FILE: what is wrong", one per damaged checkpoint, newest first
};

// Loads the newest whole checkpoint of OUTPUT_DIR into the model and optimizer: the one `latest`
// names, else, when that one is damaged (missing, truncated, checksum mismatch), the newest older
// checkpoint-EPOCH.bin that is whole. A run so goes back one epoch rather than stop, and never
// loads a damaged file. nullopt when there is no `latest` (a first run).
// Throws CheckpointError naming every file refused when none is whole, and naming the file for a
// whole checkpoint that does not fit the model (another model: an older one would not fit either)
// or is of a newer format (CheckpointVersionError).
std::optional<LoadedCheckpoint> load_latest_checkpoint(const std::string& output_dir, Sequential& model,
                                                       Optimizer& optimizer);

}  // namespace paddle::runtime
