// nccl_api.h: the dlopen'd NCCL entry points.
#include "calibrate/nccl_api.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "modelcost/errors.h"

namespace modelcost::cuda {
namespace {

template <typename F>
bool bind(void* handle, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(handle, name));
  return f != nullptr;
}

bool load(NcclApi& api) {
  void* handle = nullptr;
  for (const char* name : {"libnccl.so.2", "libnccl.so"})
    if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
  if (!handle) return false;
  return bind(handle, "ncclGetUniqueId", api.get_unique_id) && bind(handle, "ncclCommInitRank", api.comm_init_rank) &&
         bind(handle, "ncclCommInitAll", api.comm_init_all) && bind(handle, "ncclCommDestroy", api.comm_destroy) &&
         bind(handle, "ncclCommAbort", api.comm_abort) &&
         bind(handle, "ncclAllReduce", api.all_reduce) && bind(handle, "ncclAllGather", api.all_gather) &&
         bind(handle, "ncclGroupStart", api.group_start) && bind(handle, "ncclGroupEnd", api.group_end) &&
         bind(handle, "ncclGetErrorString", api.error_string);
}

}  // namespace

const NcclApi* nccl_api() {
  static NcclApi api;
  static bool loaded = false;
  static std::once_flag once;
  std::call_once(once, [] { loaded = load(api); });
  return loaded ? &api : nullptr;
}

void check_nccl(ncclResult_t result, const char* call) {
  if (result == ncclSuccess) return;
  const NcclApi* api = nccl_api();
  throw Error(kExitRuntime, std::string("NCCL: ") + call + " failed: " + (api ? api->error_string(result) : "no libnccl"));
}

}  // namespace modelcost::cuda
