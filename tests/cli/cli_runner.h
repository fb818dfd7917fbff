// Runs the modelcost binary with stdout and stderr kept apart, and writes test models to a
// private temporary folder. Header-only: tests/ builds *_test.cpp files only.
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "test_support.h"

namespace modelcost::testing {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "modelcost-cli-XXXXXX").string();
    if (!mkdtemp(pattern.data())) ADD_FAILURE() << "mkdtemp failed";
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string write_model(const TempDir& dir, const std::string& name, const ModelBuilder& builder) {
  const std::string path = dir.file(name);
  write_text(path, builder.bytes());
  return path;
}

// `args` is passed through the shell as written.
inline CliResult run_modelcost(const std::string& args) {
  TempDir dir;
  const std::string out = dir.file("stdout"), err = dir.file("stderr");
  const std::string command = std::string(MODELCOST_BINARY) + " " + args + " >" + out + " 2>" + err + " </dev/null";
  const int status = std::system(command.c_str());
  CliResult result;
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_text(out);
  result.err = read_text(err);
  return result;
}

inline std::string sample_model() { return std::string(MODELCOST_SOURCE_DIR) + "/samples/resnet50.onnx"; }

}  // namespace modelcost::testing
