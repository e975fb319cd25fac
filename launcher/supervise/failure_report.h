#pragma once
// The failure report of a node's attempt, led by the root cause: the failed process's own
// account (its error record) when it left one. A process that failed on a lost peer is a side
// effect: when one failed first, the process that failed of itself (died by a signal, or threw
// anything but a peer error) is named as the cause, and the side effects are named as such.

#include <cstddef>
#include <vector>

#include "launcher/console/launch_log.h"
#include "launcher/supervise/process_slot.h"

namespace paddle::launcher {

// Logs the report on `slots`, the attempt's processes, of which slots[first] failed first.
void report_failure(const std::vector<ProcessSlot>& slots, size_t first, LaunchLog& log);

}  // namespace paddle::launcher
