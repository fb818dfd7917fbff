// Finding and loading the CUDA module (cuda_entry.h): dlopen on first use, once per process.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "measure/cuda_entry.h"
#include "modelcost/errors.h"
#include "modelcost/version.h"

namespace modelcost {
namespace {

constexpr const char* kModuleFile = "libmodelcost_cuda.so";

std::string executable_dir() {
  std::string path(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0) return "";
  path.resize(static_cast<size_t>(n));
  return path.substr(0, path.find_last_of('/'));
}

bool is_file(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

// The directories searched, in order, for the not-found message.
std::vector<std::string> search_places() {
  std::vector<std::string> places;
  if (const char* env = std::getenv("MODELCOST_CUDA_MODULE"); env && *env) places.push_back(env);
  const std::string dir = executable_dir();
  if (!dir.empty()) {
    places.push_back(dir + "/" + kModuleFile);
    places.push_back(dir + "/" MODELCOST_MODULE_RELDIR "/" + kModuleFile);
  }
  return places;
}

using Entry = const CudaModuleApi* (*)();

// True when `entry` gives a table of this very build; otherwise status.problem says why.
bool accept_table(Entry entry, CudaModuleStatus& status, const CudaModuleApi** api) {
  const CudaModuleApi* table = entry ? entry() : nullptr;
  if (!table) {
    status.problem = "the CUDA module " + status.path + " has no entry point " MODELCOST_CUDA_MODULE_ENTRY;
  } else if (table->abi_stamp != cuda_module_abi_stamp() || std::string(table->version) != kModelcostVersion) {
    status.problem = "the CUDA module " + status.path + " was built from another modelcost (" + table->version +
                     "); rebuild or reinstall both together";
  } else {
    status.loadable = true;
    *api = table;
  }
  return status.loadable;
}

CudaModuleStatus load_module(const CudaModuleApi** api) {
  CudaModuleStatus status;
  // A process that carries the backend itself (the GPU test binary links it) uses that copy. A
  // loaded module would bring a second CUPTI timer: CUPTI hands every kernel record to the
  // callbacks registered last in the process, and both copies number external ids from 1, so
  // one copy would time nothing and the other could read the first's kernels under its own ids.
  if (auto linked = reinterpret_cast<Entry>(::dlsym(RTLD_DEFAULT, MODELCOST_CUDA_MODULE_ENTRY))) {
    status.path = "(linked into this program)";
    accept_table(linked, status, api);
    return status;
  }
  status.path = find_cuda_module();
  if (status.path.empty()) {
    std::string looked;
    for (const auto& p : search_places()) looked += (looked.empty() ? "" : ", ") + p;
    status.problem = std::string("this build has no CUDA module (") + kModuleFile + " not found; looked at " +
                     (looked.empty() ? std::string("nothing") : looked) + ")";
    return status;
  }
  // RTLD_LOCAL: the module keeps its own symbols; nothing it carries replaces the analyzer's.
  void* handle = ::dlopen(status.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    status.problem = "the CUDA module " + status.path + " does not load (are the CUDA, cuDNN and CUPTI libraries installed?): " +
                     (why ? why : "unknown dlopen error");
    return status;
  }
  if (!accept_table(reinterpret_cast<Entry>(::dlsym(handle, MODELCOST_CUDA_MODULE_ENTRY)), status, api)) ::dlclose(handle);
  return status;
}

struct LoadedModule {
  CudaModuleStatus status;
  const CudaModuleApi* api = nullptr;
};

const LoadedModule& loaded_module() {
  static LoadedModule module;
  static std::once_flag once;
  std::call_once(once, [] { module.status = load_module(&module.api); });
  return module;
}

}  // namespace

std::string find_cuda_module() {
  for (const auto& place : search_places())
    if (is_file(place)) return place;
  return "";
}

CudaModuleStatus cuda_module_status() { return loaded_module().status; }

const CudaModuleApi& cuda_module() {
  const LoadedModule& module = loaded_module();
  if (!module.api) throw Error(kExitRuntime, "no NVIDIA GPU support: " + module.status.problem);
  return *module.api;
}

}  // namespace modelcost
