// Error types that reach the user as one line on stderr and a distinct exit code.
#pragma once
#include <stdexcept>
#include <string>

namespace modelcost {

enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 2,        // bad command line
  kExitUnreadable = 3,   // file missing, unreadable, a directory
  kExitInvalidModel = 4, // not a model, truncated, cycle, dangling input, bad attribute
  kExitUnsupported = 5,  // opset newer than any known
  kExitRuntime = 6,      // measurement or device failure
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// A problem with one node: the message names the node and its op.
class NodeError : public Error {
 public:
  NodeError(const std::string& node, const std::string& op_type, const std::string& message)
      : Error(kExitInvalidModel, "node '" + node + "' (" + op_type + "): " + message) {}
};

}  // namespace modelcost
