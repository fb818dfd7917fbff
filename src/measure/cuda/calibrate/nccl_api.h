// libnccl loaded at run time (dlopen), so the module loads and measures one GPU on a machine
// without it. Shared by the all-reduce calibration and the tensor-parallel decode step.
#pragma once
#include <nccl.h>

namespace modelcost::cuda {

struct NcclApi {
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommInitAll) comm_init_all = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;  // ends a communicator's operations in flight
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
};

// The loaded library's entry points (loaded once); nullptr when libnccl.so.2 is not found.
const NcclApi* nccl_api();

// Throws Error(kExitRuntime) naming the call when a NCCL call fails.
void check_nccl(ncclResult_t result, const char* call);

}  // namespace modelcost::cuda
