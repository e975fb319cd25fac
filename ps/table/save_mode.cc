#include "ps/table/save_mode.h"

#include <stdexcept>

namespace paddle::ps {

const char* save_mode_name(SaveMode mode) {
  switch (mode) {
    case SaveMode::kAll: return "all";
    case SaveMode::kBase: return "base";
    case SaveMode::kDelta: return "delta";
  }
  return "?";
}

SaveMode parse_save_mode(const std::string& name) {
  if (name == "all") return SaveMode::kAll;
  if (name == "base") return SaveMode::kBase;
  if (name == "delta") return SaveMode::kDelta;
  throw std::invalid_argument("save mode '" + name + "' is not one of all, base, delta");
}

}  // namespace paddle::ps
