#include "measure/decode_roles.h"

#include "modelcost/measure.h"

namespace modelcost {

const std::vector<std::string>& decode_step_kernel_roles() {
  using namespace decode_role;
  static const std::vector<std::string> roles = {kEmbedding, kNorm,       kQkv,  kRotary,  kAttention, kOutput,
                                                 kAllReduce, kGateUp,     kActivation, kDown, kLmHead, kGather};
  return roles;
}

}  // namespace modelcost
