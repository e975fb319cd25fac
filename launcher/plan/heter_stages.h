#pragma once
// The heterogeneous stages of a parameter-server job (Paddle's ps-heter mode, fleet launcher 2.2+).
// The workers are stage 1; stages 2, 3, ... hold heter workers (TRAINING_ROLE=HETER_TRAINER), each
// stage on one device type. A stage's heter workers come from a count on 127.0.0.1
// (--heter_worker_num) or from a list of addresses (--heter_workers); both flags, and
// --heter_devices, give one item per stage with ';' between stages. Every process of the job is
// told its stage, its neighbours' endpoints and everyone's (stage_variables). Internal to
// launcher/plan: plan_ps (ps_plan.h) calls it.

#include <optional>
#include <string>
#include <vector>

#include "launcher/plan/address.h"
#include "launcher/plan/launch_options.h"
#include "launcher/plan/port_reservation.h"

namespace paddle::launcher {

// The first heter flag given (--heter_worker_num, --heter_workers, --heter_devices), if any.
std::optional<std::string> heter_flag_given(const LaunchOptions& o);

// Whether a PS job has heter stages: --run_mode=ps-heter, or a heter flag without --run_mode.
// Throws common::UsageError for a heter flag with --run_mode=ps.
bool wants_heter(const LaunchOptions& o);

struct HeterStage {
  int id = 2;                       // STAGE_ID
  std::string device;               // HETER_DEVICE_TYPE: cpu, gpu or xpu
  std::vector<Endpoint> endpoints;  // each with its port
};

// A PS job's heter stages, stage 2 first; no stages in a job without heter workers.
struct HeterStages {
  std::vector<HeterStage> stages;

  int count() const;                        // heter workers in every stage
  std::vector<Endpoint> endpoints() const;  // every heter worker, stage by stage
};

// The stages the options give, on ports after the servers' and the workers' as Paddle numbers
// them: from the start port, start + servers + workers + the heter workers of earlier stages, or
// free ones; list entries without a port take that number from the start port, else 6170, so
// that every node computes the same. Throws common::UsageError naming the flag at fault.
HeterStages plan_heter_stages(const LaunchOptions& o, int server_count, int worker_count, std::optional<int> start,
                              PortSource& ports);

// What Paddle tells a process of stage `stage` (1: a worker; 2 on: a heter worker) about the stages.
struct StageVariables {
  std::string previous;        // PADDLE_PREVIOUS_HETER_TRAINER_IP_PORT_LIST: stage - 1's endpoints, "" for workers
  std::string next;            // PADDLE_NEXT_HETER_TRAINER_IP_PORT_LIST: stage + 1's, "" for the last stage
  std::string all;             // PADDLE_ALL_HETER_TRAINER_IP_PORT_LIST: every heter worker
  std::string device;          // HETER_DEVICE_TYPE: cpu for the workers
  std::string stage_id;        // STAGE_ID
  std::string stage_num;       // STAGE_NUM: the workers' stage and the heter stages
  std::string stage_trainers;  // PADDLE_STAGE_TRAINERS_NUM: processes per stage, as Python prints a list: [2, 2]
};

// `worker_list` is the workers' PADDLE_TRAINER_ENDPOINTS, stage 2's previous stage.
StageVariables stage_variables(const HeterStages& heter, int stage, int worker_count, const std::string& worker_list);

}  // namespace paddle::launcher
