// Runs the pattern table over the nodes and builds the groups.
#include <algorithm>
#include <map>

#include "fusion/patterns.h"

namespace modelcost {

size_t FusionPlan::kernels() const {
  return static_cast<size_t>(std::count_if(groups.begin(), groups.end(), [](const FusedGroup& g) { return g.launches; }));
}

bool runs_library_tail(const FusedGroup& group, double element_bytes) {
  return group.library_tail || (group.tail_where_unaligned && !tile_aligned(group.kernel, element_bytes));
}

bool outputs_known(const NodeAnalysis& node) {
  bool any = false;
  for (int id : node.node->outputs) {
    if (id < 0) continue;
    if (!node.graph->tensors[id].value) return false;
    any = true;
  }
  return any;
}

std::vector<std::string> fusion_pattern_names() {
  std::vector<std::string> names;
  for (const auto& row : fusion::pattern_table()) names.push_back(row.name);
  return names;
}

namespace {

struct Draft {
  const fusion::FusionPattern* row = nullptr;
  std::vector<size_t> members;
  size_t anchor = 0;
  std::string apart_reason;  // set on the members of a match planned apart
};

// Claims a candidate's members: a new group, or (for a candidate that names a node of an
// existing group, as a layout op folding into its neighbour) more members of that group.
void claim(fusion::FusionGraph& g, std::vector<Draft>& drafts, const fusion::FusionPattern& row,
           const fusion::GroupCandidate& candidate) {
  int group = -1;
  for (size_t m : candidate.members)
    if (g.claimed(m)) group = g.group_of(m);
  if (group < 0) {
    group = static_cast<int>(drafts.size());
    drafts.push_back({&row, {}, candidate.anchor, {}});
  }
  for (size_t m : candidate.members)
    if (!g.claimed(m)) {
      g.claim(m, group);
      drafts[group].members.push_back(m);
    }
  std::sort(drafts[group].members.begin(), drafts[group].members.end());
  if (row.on_claim) row.on_claim(g, candidate.anchor);
}

// The one group that reads everything group `k` writes, or -1.
int only_reader(const fusion::FusionGraph& g, const std::vector<Draft>& drafts, size_t k) {
  int reader = -1;
  for (size_t m : drafts[k].members)
    for (int id : g.node(m).outputs) {
      if (id < 0) continue;
      if (g.is_graph_output(id)) return -1;
      for (size_t c : g.consumers(id)) {
        const int group = g.group_of(c);
        if (group == int(k)) continue;
        if (group < 0 || (reader >= 0 && reader != group)) return -1;
        reader = group;
      }
    }
  return reader;
}

// A pointwise group whose results only one later pointwise group reads runs inside that group
// (GELU's 0.5 * x, seeded before the rest of the formula is ready, joins it).
void merge_pointwise_chains(fusion::FusionGraph& g, std::vector<Draft>& drafts) {
  for (size_t k = 0; k < drafts.size(); ++k) {
    if (drafts[k].members.empty() || std::string(drafts[k].row->name) != "pointwise") continue;
    const int into = only_reader(g, drafts, k);
    if (into < 0 || std::string(drafts[into].row->name) != "pointwise") continue;
    for (size_t m : drafts[k].members) {
      g.claim(m, into);
      drafts[into].members.push_back(m);
    }
    std::sort(drafts[into].members.begin(), drafts[into].members.end());
    drafts[k].members.clear();
  }
}

const fusion::FusionPattern& pattern_row(const std::string& name) {
  for (const auto& row : fusion::pattern_table())
    if (row.name == name) return row;
  return fusion::pattern_table().back();
}

// A match the runtime cannot run as one kernel becomes the kernels it runs as: chains of its
// elementwise members and each other member alone.
void split_unrunnable(const fusion::FusionGraph& g, std::vector<Draft>& drafts) {
  const fusion::FusionPattern& single = pattern_row("single");
  const fusion::FusionPattern& chain = pattern_row("pointwise");
  std::vector<Draft> split;
  for (Draft& d : drafts) {
    const std::string why = d.members.size() > 1 ? fusion::why_apart(g, d.row->name, d.members, d.anchor) : "";
    if (why.empty()) {
      split.push_back(std::move(d));
      continue;
    }
    for (std::vector<size_t>& part : fusion::apart_parts(g, d.members)) {
      const auto first_work = std::find_if(part.begin(), part.end(), [&](size_t m) { return !g.is_alias(m) && !g.is_idle(m); });
      const size_t anchor = first_work == part.end() ? part.front() : *first_work;
      split.push_back({part.size() == 1 ? &single : &chain, std::move(part), anchor, why});
    }
  }
  drafts = std::move(split);
}

// The first member that does work at run time: an Identity or Reshape of a weight, which an
// exporter may place at the top of the graph, is folded away before anything runs.
size_t first_running(const fusion::FusionGraph& g, const Draft& draft) {
  for (size_t m : draft.members)
    if (!g.is_alias(m) || !g.dynamic_inputs(m).empty()) return m;
  return draft.members.front();
}

// An attention match the runtime's flash kernel cannot run is not claimed: the later rows plan
// its members as a runtime without that kernel runs them (the score product with its scale in
// the library epilogue, K's transpose read in place, the softmax alone). Its reason is kept for
// the groups its members join.
bool decline(const fusion::FusionGraph& g, const fusion::FusionPattern& row, const fusion::GroupCandidate& candidate,
             FusionReach reach, std::map<size_t, std::string>& declined) {
  if (reach != FusionReach::kMeasuredRuntime || std::string(row.name) != "attention") return false;
  const std::string why = fusion::why_apart(g, row.name, candidate.members, candidate.anchor);
  if (why.empty()) return false;
  for (size_t m : candidate.members) declined.emplace(m, why);
  return true;
}

void mark_declined(const std::map<size_t, std::string>& declined, std::vector<Draft>& drafts) {
  for (Draft& d : drafts)
    for (size_t m : d.members)
      if (auto it = declined.find(m); it != declined.end() && d.apart_reason.empty()) d.apart_reason = it->second;
}

}  // namespace

FusionPlan fuse(const Analysis& analysis, FusionReach reach) {
  fusion::FusionGraph g(analysis);
  std::vector<Draft> drafts;
  std::map<size_t, std::string> declined;  // node -> why the attention match holding it was declined
  for (const auto& row : fusion::pattern_table())
    for (size_t i = 0; i < g.size(); ++i) {
      if (g.claimed(i) || g.is_idle(i)) continue;
      if (auto candidate = row.match(g, i); candidate && !decline(g, row, *candidate, reach, declined))
        claim(g, drafts, row, *candidate);
    }
  merge_pointwise_chains(g, drafts);
  drafts.erase(std::remove_if(drafts.begin(), drafts.end(), [](const Draft& d) { return d.members.empty(); }), drafts.end());
  if (reach == FusionReach::kMeasuredRuntime) split_unrunnable(g, drafts);
  mark_declined(declined, drafts);
  // Groups in the order their first member runs.
  std::vector<size_t> order(drafts.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return first_running(g, drafts[a]) < first_running(g, drafts[b]); });
  FusionPlan plan;
  plan.group_of.assign(g.size(), -1);
  for (size_t k : order) {
    const Draft& d = drafts[k];
    FusedGroup group;
    group.id = plan.groups.size();
    group.pattern = d.row->name;
    group.members = d.members;
    group.anchor = d.anchor;
    group.apart_reason = d.apart_reason;
    if (reach == FusionReach::kMeasuredRuntime && d.row->name == std::string("epilogue")) {
      const LibraryTail tail = fusion::library_tail(g, d.members, d.anchor);
      group.library_tail = tail == LibraryTail::kAlways;
      group.tail_where_unaligned = tail == LibraryTail::kWhereUnaligned;
    }
    d.row->cost(g, group);
    group.label = d.row->label(g, group);
    group.kernel = group.launches ? group_kernel(group, analysis) : KernelShape{};
    for (size_t m : d.members) plan.group_of[m] = static_cast<int>(group.id);
    plan.groups.push_back(std::move(group));
  }
  return plan;
}

}  // namespace modelcost
