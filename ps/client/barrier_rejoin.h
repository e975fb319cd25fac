#pragma once
// How a worker restarted in place rejoins the servers' barriers (ps/wire/PROTOCOL.md, REJOIN).
//
// Its dead self may have got anywhere in its last barrier: nowhere; to every server, some of
// which completed the barrier with its pushes while others still wait for other workers; or to
// some servers only. Every server answers how many barriers it has completed and whether the
// worker (its dead connection) waits at the next one. From that:
//
//   it reached every server          its step counts: wait until every server has completed the
//                                    barrier, and go on after it
//   it reached some, none completed  take it off the barrier everywhere (its pushes with it):
//                                    the step is to be done again
//   a server completed a barrier     refused: that barrier applied its step on some servers and
//   it never reached elsewhere       not on others, which no redoing can mend
//   it reached none                  nothing to do

#include <cstdint>
#include <string>
#include <vector>

#include "ps/client/client.h"

namespace paddle::ps {

// One server's answer to REJOIN.
struct BarrierState {
  uint64_t completed = 0;  // barriers this server has completed
  bool waiting = false;    // the worker's dead connection waits at its next barrier
};

struct RejoinDecision {
  enum class Action {
    kNone,     // nothing of the dead worker waits anywhere
    kAwait,    // its last barrier reached every server: wait until each has completed `completed`
    kDrop,     // its last barrier reached some servers only, none completed: drop it everywhere
  };
  Action action = Action::kNone;
  uint64_t completed = 0;  // the barriers the job has completed once the action is done
};

// A barrier completed with the dead worker's step on some servers only: the worker cannot take
// up its part alone (its launcher then ends, or restarts whole, the job).
class SplitBarrier : public PsError {
 public:
  using PsError::PsError;
};

// `states` in server order, `endpoints` to name them. Throws SplitBarrier when a barrier was
// completed with the dead worker's step on some servers only.
RejoinDecision decide_rejoin(const std::vector<BarrierState>& states, const std::vector<std::string>& endpoints);

}  // namespace paddle::ps
