#include "ps/client/barrier_rejoin.h"

#include <fmt/format.h>

#include <algorithm>

#include "ps/client/client.h"

namespace paddle::ps {

RejoinDecision decide_rejoin(const std::vector<BarrierState>& states, const std::vector<std::string>& endpoints) {
  RejoinDecision d;
  if (states.empty()) return d;
  uint64_t most = 0;
  for (const BarrierState& s : states) most = std::max(most, s.completed);
  bool lagging = false, all_waiting = true, any_waiting = false;
  for (size_t i = 0; i < states.size(); ++i) {
    const BarrierState& s = states[i];
    if (s.completed + 1 == most && s.waiting) {
      lagging = true;
      continue;
    }
    if (s.completed != most) {
      const size_t ahead = static_cast<size_t>(std::find_if(states.begin(), states.end(), [&](const BarrierState& x) {
                                                 return x.completed == most;
                                               }) - states.begin());
      throw SplitBarrier(fmt::format(
          "REJOIN: parameter server {} has completed {} barrier(s) but {} has completed {} and this worker's dead "
          "self never reached its next: its last barrier applied its step on some servers only, so the step cannot "
          "be redone alone",
          endpoints.at(ahead), most, endpoints.at(i), s.completed));
    }
    all_waiting = all_waiting && s.waiting;
    any_waiting = any_waiting || s.waiting;
  }
  if (lagging) {
    // Its arrival at barrier `most` is everywhere: completed where the others were quicker,
    // waiting where one is still to come.
    d.action = RejoinDecision::Action::kAwait;
    d.completed = most;
  } else if (all_waiting) {
    d.action = RejoinDecision::Action::kAwait;
    d.completed = most + 1;
  } else if (any_waiting) {
    d.action = RejoinDecision::Action::kDrop;
    d.completed = most;
  } else {
    d.completed = most;
  }
  return d;
}

}  // namespace paddle::ps
