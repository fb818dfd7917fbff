#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "costs/cost_model.h"
#include "load/model_loader.h"
#include "modelcost/errors.h"
#include "ops/op_registry.h"
#include "shapes/shape_engine.h"

namespace modelcost {

int run_app(int argc, char** argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"modelcost: per-layer cost of an ONNX model"};
  std::string path;
  app.add_option("model", path, "ONNX model file")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  try {
    Model model = load_model(path);
    Diagnostics diagnostics;
    ShapeEngine engine(OpRegistry::instance(), diagnostics);
    engine.run(model, {});
    Analysis analysis = compute_costs(model, OpRegistry::instance(), diagnostics);
    out << fmt::format("macs {} flops {} params {} nodes {} unshaped {} uncosted {}\n", analysis.totals.macs,
                       analysis.totals.flops, analysis.totals.params, analysis.totals.nodes,
                       analysis.totals.unshaped_nodes, analysis.totals.uncosted_nodes);
  } catch (const Error& e) {
    err << "modelcost: error: " << e.what() << "\n";
    return e.code();
  }
  return 0;
}

}  // namespace modelcost
