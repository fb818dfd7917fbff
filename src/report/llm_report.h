// Printers of the LLM serving plan: a terminal summary with a table per batch x context, JSON and
// CSV sections, and an SVG of TPOT and tokens/s against batch for each context (docs/llm.md).
#pragma once
#include <ostream>
#include <string>

#include "modelcost/llm.h"

namespace modelcost {

void print_llm_plan(const LlmPlan& plan, const std::string& model_name, std::ostream& out);
// {"llm": {"model": ..., "device": ..., "precision": ..., "memory": ..., "batches": [...], ...}}
void write_llm_json(const LlmPlan& plan, const std::string& model_name, std::ostream& out);
// One row per batch x context.
void write_llm_csv(const LlmPlan& plan, std::ostream& out);
void write_llm_svg(const LlmPlan& plan, const std::string& model_name, std::ostream& out);

}  // namespace modelcost
