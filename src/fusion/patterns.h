// The fusion pattern table: one row per kind of kernel a runtime builds, tried in order. Each
// row's matcher looks at one unclaimed node and proposes the members of a group around it.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fusion/fusion_graph.h"
#include "modelcost/fusion.h"

namespace modelcost::fusion {

struct GroupCandidate {
  std::vector<size_t> members;
  size_t anchor = 0;
};

// Proposes a group around node i (unclaimed), or nothing.
using GroupMatcher = std::function<std::optional<GroupCandidate>(const FusionGraph& graph, size_t i)>;
// Fills a group's FLOPs and bytes from its members.
using GroupCostRule = std::function<void(const FusionGraph& graph, FusedGroup& group)>;
// Names what the group computes ("conv+bias+relu", "layer_norm", ...).
using GroupLabeler = std::function<std::string(const FusionGraph& graph, const FusedGroup& group)>;

// What claiming a match records in the graph for the rows tried after it (node `anchor`'s group).
using GroupClaimHook = std::function<void(FusionGraph& graph, size_t anchor)>;

struct FusionPattern {
  const char* name;
  GroupMatcher match;
  GroupCostRule cost;
  GroupLabeler label;
  GroupClaimHook on_claim = nullptr;  // none for most rows
};

const std::vector<FusionPattern>& pattern_table();

// Matchers (patterns.cpp, attention_pattern.cpp).
std::optional<GroupCandidate> match_fused_op(const FusionGraph& g, size_t i);
std::optional<GroupCandidate> match_attention(const FusionGraph& g, size_t i);
std::optional<GroupCandidate> match_swiglu(const FusionGraph& g, size_t i);
std::optional<GroupCandidate> match_sibling_products(const FusionGraph& g, size_t i);
std::optional<GroupCandidate> match_epilogue(const FusionGraph& g, size_t i);
std::optional<GroupCandidate> match_in_place(const FusionGraph& g, size_t i);
std::optional<GroupCandidate> match_layout_fold(const FusionGraph& g, size_t i);
std::optional<GroupCandidate> match_region(const FusionGraph& g, size_t i);
std::optional<GroupCandidate> match_single(const FusionGraph& g, size_t i);

// Cost rules (group_cost.cpp; in_place.cpp).
void boundary_cost(const FusionGraph& g, FusedGroup& group);
void in_place_cost(const FusionGraph& g, FusedGroup& group);

// The in_place pattern's tensors (in_place.cpp): those node i would hold inside another's buffer
// where it runs in place (empty where it cannot), and those of any node's block copies.
std::vector<HeldWithin> held_tensors(const FusionGraph& g, size_t i);
std::vector<HeldWithin> block_copies(const Graph& graph, const Node& node);
// The in_place row's claim: its held tensors marked, so no later group places them again.
void mark_held_tensors(FusionGraph& g, size_t anchor);

// Labels (labels.cpp): what the members compute, from a table of recognisers.
std::vector<std::string> recognise(const FusionGraph& g, const std::vector<size_t>& members);
std::string epilogue_label(const FusionGraph& g, const FusedGroup& group);
std::string region_label(const FusionGraph& g, const FusedGroup& group);
std::string attention_label(const FusionGraph& g, const FusedGroup& group);
std::string op_label(const FusionGraph& g, const FusedGroup& group);
std::string sibling_label(const FusionGraph& g, const FusedGroup& group);  // "3x matmul+bias"
std::string in_place_label(const FusionGraph& g, const FusedGroup& group);  // "concat in place"

// Why a pattern match cannot run as one kernel of the deployed runtime, or "" (kernel_split.cpp).
std::string why_apart(const FusionGraph& g, const std::string& pattern, const std::vector<size_t>& members, size_t anchor);
// Whether the library call of a conv or matrix product anchoring `members` leaves some of them to
// a kernel after it (kernel_split.cpp).
LibraryTail library_tail(const FusionGraph& g, const std::vector<size_t>& members, size_t anchor);
// The kernels a match planned apart runs as, in member order: each run of consecutive
// elementwise members over one output shape as one generated chain (within kChainLimits), every
// other member alone (kernel_split.cpp).
std::vector<std::vector<size_t>> apart_parts(const FusionGraph& g, std::vector<size_t> members);

// The results of `members` read outside them (or the graph's outputs): what their kernel stores.
size_t exit_count(const FusionGraph& g, const std::vector<size_t>& members);

// Shared by the matchers: is node `m` in the sorted member list.
bool contains(const std::vector<size_t>& members, size_t m);

}  // namespace modelcost::fusion
