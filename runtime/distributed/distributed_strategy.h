#pragma once
// DistributedStrategy: how a Fleet job trains, as typed settings: the collective's gradient
// buckets and device, the parameter-server mode with its options, and mixed precision when it
// is on. Paddle's fleet.DistributedStrategy spells the same things as flags (a_sync,
// a_sync_configs.k_steps, amp, amp_configs.use_pure_fp16, use_bf16); those spellings are
// accessors here, for programs written against Paddle's.
//
// Fleet::init is the one place that checks a strategy: its values, and what this build can
// run where the model is (runtime/distributed/fleet.h).

#include <optional>
#include <string_view>

#include "common/enum_names.h"
#include "runtime/core/dtype.h"
#include "runtime/nn/amp_policy.h"
#include "runtime/nn/loss_scaler.h"

namespace paddle::runtime {

// How a parameter-server job's gradients reach the servers: sync (every step's pushes are
// applied together at a barrier), async (a communicator thread merges and sends them while
// training goes on) or GEO (k local steps, then the deltas go).
enum class PsMode { kSync, kAsync, kGeo };
inline constexpr common::EnumNames<PsMode, 3> kPsModeNames{
    {{{PsMode::kSync, "sync"}, {PsMode::kAsync, "async"}, {PsMode::kGeo, "geo"}}}};

struct PsStrategy {
  PsMode mode = PsMode::kSync;
  int k_steps = 0;            // GEO: local steps between sends, > 0
  int send_queue_size = 16;   // async: steps queued before training waits
  int max_merge_var_num = 4;  // async: steps merged into one send
};

// The names a program set mixed precision's settings by, so that an error names the one its
// user wrote: Fleet's (strategy.amp, amp_configs.*) or a train config's (the amp group).
struct AmpSettingNames {
  std::string_view enabled;          // turning it on
  std::string_view level;            // O2
  std::string_view allreduce_dtype;  // the type gradients are averaged in
  std::string_view group;            // the prefix of the loss-scaling keys and op lists
};
inline constexpr AmpSettingNames kFleetAmpNames{"strategy.amp", "amp_configs.use_pure_fp16",
                                                "amp_configs.allreduce_dtype", "amp_configs"};
inline constexpr AmpSettingNames kConfigAmpNames{"amp.enabled", "amp.level", "amp.allreduce_dtype", "amp"};

// Mixed precision, on: which ops run in which 16-bit type, and the loss scaling that guards it.
struct AmpOptions {
  AmpPolicy policy;                         // dtype, level (O1/O2), custom white and black lists
  DType allreduce_dtype = DType::kFloat32;  // ours: gradients are all-reduced in this type
  LossScalingOptions scaling;               // Fleet's amp_configs names and defaults
  AmpSettingNames names = kFleetAmpNames;
};

struct DistributedStrategy {
  double fuse_grad_size_in_MB = 25;  // collective: gradient bucket size
  bool tf32 = false;                 // collective on a GPU: allow TF32 tensor cores
  bool use_cpu = false;              // collective: keep the model on the host even beside a GPU
  PsStrategy ps;
  std::optional<AmpOptions> amp;  // collective on a GPU; empty: float32

  // Paddle's spellings.
  bool a_sync() const { return ps.mode != PsMode::kSync; }
  // a_sync off is sync; on with k_steps 0 async; on with k_steps > 0 GEO every k_steps steps.
  void set_a_sync(bool a_sync, int k_steps = 0) {
    ps.mode = !a_sync ? PsMode::kSync : k_steps > 0 ? PsMode::kGeo : PsMode::kAsync;
    ps.k_steps = k_steps;
  }
  bool use_pure_fp16() const { return amp && amp->policy.level == AmpLevel::kO2; }
  bool use_bf16() const { return amp && amp->policy.dtype == DType::kBFloat16; }
};

}  // namespace paddle::runtime
