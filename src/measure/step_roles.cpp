#include "measure/step_roles.h"

#include "modelcost/measure.h"

namespace modelcost {

const std::vector<std::string>& serving_step_kernel_roles() {
  using namespace step_role;
  static const std::vector<std::string> roles = {kEmbedding, kNorm,  kQkv,  kQueryUp, kRotary, kLatentUp, kKvExpand,
                                                 kPrefillAttention, kQueryAbsorb, kAttention, kValueUp, kOutput,    kAllReduce, kGateUp, kActivation, kDown, kRouter,
                                                 kRouting,   kExpertGateUp, kExpertActivation, kExpertDown, kExpertCombine,
                                                 kSharedGateUp, kSharedActivation, kSharedDown, kLastPositions, kLmHead,
                                                 kGather};
  return roles;
}

}  // namespace modelcost
