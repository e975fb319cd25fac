#pragma once
// Whether a job whose generation failed starts again, whole, within --max_restarts, and the
// launcher's line saying what happens. The supervisor asks once per failed generation, after
// the root cause is agreed (a change of an elastic job's nodes restarts it first, uncounted):
//
//   the root cause stops the job (a launcher     no: "not restarting: a restart cannot mend this"
//   lost or signalled), restarts left
//   a hang, under --on_hang=stop                 no: "not restarting: the job hung (--on_hang=stop)"
//   its restarts are spent (of a budget > 0)     no: "giving up after N restart(s)"
//   no budget (--max_restarts=0)                 no, and nothing to say: the failure is the report
//   otherwise                                    yes: "restarting ...: restart K of N"

#include <string>

#include "launcher/supervise/job_failure.h"

namespace paddle::launcher {

struct JobRestartVerdict {
  bool restart = false;
  std::string line;  // empty, a warning when it restarts, else an error
};

// `used` restarts of `budget` so far; `hang_stops`: --on_hang=stop; `what_restarts` names what a restart starts again ("all 2
// local process(es)", "the whole job on every node"); `generation` is the next one's number.
JobRestartVerdict judge_job_failure(const JobFailure& root, int used, int budget, bool hang_stops,
                                    const std::string& what_restarts, int generation);

}  // namespace paddle::launcher
