// Why a convolution measured in the deployed view runs slower than twice its class prediction,
// named from what the kernel plan knows of its shape and from the runner the measurement picked.
// A planner reading a measured conv far off its prediction learns whether the library lacks a
// kernel for the shape (and a compiler's would be as slow) or nothing here explains it.
#pragma once
#include <string>

#include "modelcost/kernel_plan.h"

namespace modelcost {

// A measured/predicted ratio above this asks for a reason.
constexpr double kSlowConvRatio = 2.0;

struct SlowConv {
  KernelShape kernel;
  std::string runner;  // the deployed measurement's runner description
  double measured_us = 0, predicted_us = 0;
};

// True for the conv classes (dense, 1x1, grouped, depthwise) measured slower than kSlowConvRatio x
// their prediction.
bool is_slow_conv(const SlowConv& c);
// The first reason that holds, or "" where none does (reported as unexplained).
std::string slow_conv_reason(const SlowConv& c);

}  // namespace modelcost
