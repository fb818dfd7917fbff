#include "core/runtime_compiler.h"

#include "timing/wall_ledger.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include <map>
#include <mutex>
#include <vector>

namespace modelcost::cuda {
namespace {

// The NVRTC entry points the compiler uses, resolved from the library found first.
struct Nvrtc {
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  std::string missing;  // why it is not usable; empty when it is

  Nvrtc() {
    void* lib = nullptr;
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      missing = "NVRTC (libnvrtc.so) not found";
      return;
    }
    create = reinterpret_cast<decltype(create)>(dlsym(lib, "nvrtcCreateProgram"));
    compile = reinterpret_cast<decltype(compile)>(dlsym(lib, "nvrtcCompileProgram"));
    log_size = reinterpret_cast<decltype(log_size)>(dlsym(lib, "nvrtcGetProgramLogSize"));
    log = reinterpret_cast<decltype(log)>(dlsym(lib, "nvrtcGetProgramLog"));
    cubin_size = reinterpret_cast<decltype(cubin_size)>(dlsym(lib, "nvrtcGetCUBINSize"));
    cubin = reinterpret_cast<decltype(cubin)>(dlsym(lib, "nvrtcGetCUBIN"));
    destroy = reinterpret_cast<decltype(destroy)>(dlsym(lib, "nvrtcDestroyProgram"));
    if (!create || !compile || !log_size || !log || !cubin_size || !cubin || !destroy) missing = "NVRTC lacks an entry point";
  }
};

// CUBIN for the current device, or empty with *why.
std::vector<char> compile_cubin(const Nvrtc& nvrtc, const std::string& source, std::string* why) {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    *why = "no CUDA device";
    return {};
  }
  nvrtcProgram program = nullptr;
  if (nvrtc.create(&program, source.c_str(), "modelcost_generated.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    *why = "nvrtcCreateProgram failed";
    return {};
  }
  const std::string arch = "--gpu-architecture=sm_" + std::to_string(major * 10 + minor);
  const char* options[] = {arch.c_str(), "--std=c++17"};
  std::vector<char> cubin;
  if (nvrtc.compile(program, 2, options) == NVRTC_SUCCESS) {
    size_t bytes = 0;
    if (nvrtc.cubin_size(program, &bytes) == NVRTC_SUCCESS && bytes > 0) {
      cubin.resize(bytes);
      if (nvrtc.cubin(program, cubin.data()) != NVRTC_SUCCESS) cubin.clear();
    }
  }
  if (cubin.empty()) {
    size_t bytes = 0;
    std::string log;
    if (nvrtc.log_size(program, &bytes) == NVRTC_SUCCESS && bytes > 1) {
      log.resize(bytes);
      nvrtc.log(program, log.data());
      log.resize(bytes - 1);
    }
    *why = "NVRTC refused the generated kernel: " + log.substr(0, 400);
  }
  nvrtc.destroy(&program);
  return cubin;
}

}  // namespace

cudaKernel_t compile_kernel(WallLedger& ledger, const std::string& source, const std::string& name, std::string* why) {
  static const Nvrtc nvrtc;
  static std::mutex mutex;
  static std::map<std::string, cudaKernel_t> compiled;  // by source + name; libraries stay loaded
  if (!nvrtc.missing.empty()) {
    *why = nvrtc.missing;
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mutex);
  const std::string key = name + '\n' + source;
  auto it = compiled.find(key);
  if (it != compiled.end()) return it->second;
  LedgerScope compiling(ledger, "NVRTC: chain kernels compiled and loaded");
  const std::vector<char> cubin = compile_cubin(nvrtc, source, why);
  if (cubin.empty()) return nullptr;
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  if (cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0) != cudaSuccess ||
      cudaLibraryGetKernel(&kernel, library, name.c_str()) != cudaSuccess) {
    cudaGetLastError();
    *why = "the generated kernel did not load";
    return nullptr;
  }
  compiled[key] = kernel;
  return kernel;
}

}  // namespace modelcost::cuda
