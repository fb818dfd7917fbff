// User op rules: a TOML file declaring a custom op's shape rule and cost, read at run time
// (--ops FILE, $MODELCOST_OPS), so an op without a built-in rule needs no rebuild. Format:
// docs/ops/user_rules.md.
#pragma once
#include <string>
#include <vector>

#include "ops/op_registry.h"

namespace modelcost {

// Parses one op-rules file's text; throws Error(kExitUsage) naming `origin`, the op and the key
// at fault. The rules are kept for the life of the process; a later rule for the same op
// replaces an earlier one.
void load_user_op_rules_text(const std::string& text, const std::string& origin, OpRegistry& registry);

// The built-in table plus the rules of every file in `files` and in $MODELCOST_OPS (a ':'
// separated list of files, or folders whose *.toml files are read) when `read_environment`.
// Without any rule file this is OpRegistry::instance(); the same files give the same registry.
const OpRegistry& registry_with_user_rules(const std::vector<std::string>& files, bool read_environment = true);

}  // namespace modelcost
