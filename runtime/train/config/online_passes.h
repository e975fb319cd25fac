#pragma once
// OnlinePasses: the passes of a streaming (online) run and the record of its saves, as
// PaddleRec's online trainer keeps them (train_config.h OnlineConfig).
//
// The passes run day after day, passes 1 to passes_per_day within a day; a pass's data is
// data_pattern with {day} and {pass} replaced, which may arrive while the run goes on. Its saves go to SAVE_DIR/DAY/PASS (the delta
// after every pass) and SAVE_DIR/DAY/base (the day's base, after its last pass).
//
// SAVE_DIR/donefile.txt lists the saves that completed, oldest first, one per line:
//
//   DAY PASS MODE DIR        e.g.  "20261101 3 delta /data/model/20261101/3"
//                                  "20261101 0 base /data/model/20261101/base"
//
// (PASS 0 for a base). The file is replaced whole after each save, so a save that did not
// finish is never listed, and the pass it belonged to runs again.

#include <string>
#include <vector>

#include "ps/table/save_mode.h"
#include "runtime/train/config/train_config.h"

namespace paddle::runtime {

struct OnlinePass {
  size_t index = 0;  // in the run, from 0: the pass's shuffle
  std::string day;
  int pass = 1;      // in its day, from 1
  bool last_of_day = false;
  std::string data;  // file or directory
  std::string delta_dir, base_dir;
};

struct OnlineSave {
  std::string day;
  int pass = 0;  // 0 for a base
  ps::SaveMode mode = ps::SaveMode::kDelta;  // kDelta or kBase
  std::string dir;
};

// Whether a pass's data has arrived: a file that exists, or a directory holding _SUCCESS (the
// marker Hadoop's writers, and PaddleRec's online data, leave when a directory is complete).
bool pass_data_ready(const std::string& path);

// Every pass of `online`, in order, saving under `save_dir`.
std::vector<OnlinePass> online_passes(const OnlineConfig& online, const std::string& save_dir);

// The saves SAVE_DIR/donefile.txt lists; none when it does not exist. Throws common::DataError
// naming file:line for a line that is not DAY PASS MODE DIR.
std::vector<OnlineSave> read_online_saves(const std::string& save_dir);
// Replaces SAVE_DIR/donefile.txt with `saves`.
void write_online_saves(const std::string& save_dir, const std::vector<OnlineSave>& saves);

// Where a run that finds `saves` carries on: the index of the first pass without a delta save;
// passes.size() when all are done.
size_t first_unsaved_pass(const std::vector<OnlinePass>& passes, const std::vector<OnlineSave>& saves);

// The saves that rebuild the tables as they were after pass `resume_at` - 1: the last base
// before it, then the deltas after that base, in order. Empty when resume_at is 0.
std::vector<OnlineSave> saves_to_load(const std::vector<OnlinePass>& passes, const std::vector<OnlineSave>& saves,
                                      size_t resume_at);

}  // namespace paddle::runtime
