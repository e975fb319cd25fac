#pragma once
// The generations of a training run. A job restarted by --max_restarts, or by an elastic job's
// change of membership, starts every process again (PADDLE_RESTART_COUNT counts the
// generations, and the world size may differ); the run then resumes from the leader's latest
// checkpoint. The leader keeps the run's history in OUTPUT_DIR/generations.json, rewritten
// atomically as each generation starts, so it survives the next restart; metrics.json
// reports it (report.h).
//
// File format: a JSON array, oldest first, one object per generation:
//   {"generation": PADDLE_RESTART_COUNT (0 when unset), "world_size": workers,
//    "from_epoch": epochs completed when it started, "from_step": global steps then}
// A fresh run starts a history of one entry. A resuming run (resume=true, a restarted
// process, a PS run from start_pass) appends itself to the history it finds, keeping only the
// entries that started at or before its own start (by epoch, then step: an online run counts
// its steps from 0 in every generation): a history never runs ahead of the checkpoint it continues. A generation that ended before its first checkpoint stays listed,
// and the next one starts where it did.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/environment.h"
#include "runtime/nn/checkpoint.h"

namespace paddle::runtime {

struct Generation {
  int64_t generation = 0;  // PADDLE_RESTART_COUNT
  int world_size = 1;
  CheckpointPosition from;
  bool operator==(const Generation& o) const {
    return generation == o.generation && world_size == o.world_size && from.rounds == o.from.rounds &&
           from.step == o.from.step;
  }
};

// How a run began: its generation, and whether it continues an earlier run's checkpoint.
struct RunOrigin {
  int64_t generation = 0;
  bool resuming = false;
};

// The generation is PADDLE_RESTART_COUNT (0 when unset); a restarted process always resumes,
// otherwise only when `resume_asked` (config.resume, or a PS run's start_pass).
RunOrigin run_origin(const common::Environment& env, bool resume_asked);

nlohmann::json generations_to_json(const std::vector<Generation>& history);

// The history in `file`, nothing when it does not exist. Throws common::DataError naming the
// file for one that is not such a list.
std::vector<Generation> read_generations(const std::filesystem::path& file);

// Records `now` in OUTPUT_DIR/generations.json by the rules above and returns the history
// written. Throws common::DataError naming the file when it cannot be read or written.
std::vector<Generation> record_generation(const std::string& output_dir, const Generation& now, bool resuming);

// The history in one line, for the log: "3 worker(s) from epoch 0 (step 0, generation 0), then
// 2 worker(s) from epoch 3 (step 18, generation 1)".
std::string describe_generations(const std::vector<Generation>& history);

}  // namespace paddle::runtime
