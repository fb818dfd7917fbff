// The analysis as one pure function of (model, options): shapes, then costs.
#include "costs/cost_model.h"
#include "modelcost/analysis.h"
#include "ops/op_registry.h"
#include "shapes/shape_engine.h"

namespace modelcost {

Analysis analyze(const Model& model, const AnalysisOptions& options) {
  const OpRegistry& registry = options.registry ? *options.registry : OpRegistry::instance();
  Diagnostics diagnostics;
  ShapeEngine engine(registry, diagnostics);
  std::shared_ptr<const Graph> shaped = engine.run(model, options);
  return compute_costs(model, std::move(shaped), registry, diagnostics);
}

}  // namespace modelcost
