// A generator of well-formed but hostile ONNX graphs: astronomic, negative and zero dims, integer
// edge values, generators asked for huge outputs, deep and long control flow, sequence ops,
// recursive and exponentially growing local functions, external data outside the model's
// folder, wrong attribute types, duplicate and empty names, mismatched element types, contrib
// ops with missing inputs, wide and long graphs. Each case is a model file's bytes; the tests
// run the CLI over each. Header-only: tests/ builds *_test.cpp files only.
#pragma once
#include <vector>

#include "cli/hostile_builders.h"
#include "cli/hostile_features.h"

namespace modelcost::testing::hostile {

// ---- dims ----
inline void dim_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{kHuge, kHuge, kHuge});
    m.node("Relu", {"x"}, {"out"});
    add("astronomic_input_dims", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{INT64_MAX, 0, INT64_MAX});
    m.node("ReduceSum", {"x"}, {"out"});
    add("zero_beside_max_dims", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{-7, 3});
    m.node("Relu", {"x"}, {"out"});
    add("negative_input_dim", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{4});
    m.value_info("out", kFloat, Shape{-3});
    m.node("Custom", {"x"}, {"out"}, "unknown.domain");
    add("negative_declared_dim", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("a", kFloat, Shape{0, 8}).input("b", kFloat, Shape{8, 0});
    m.node("MatMul", {"a", "b"}, {"m"});
    m.node("ReduceMean", {"m"}, {"out"});
    add("zero_sized_tensors", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{1, kHuge});
    m.input("w", kFloat, Shape{kHuge, kHuge});
    m.node("MatMul", {"x", "w"}, {"out"});
    add("matmul_astronomic", m.output("out"));
  }
  {
    ModelBuilder m;
    for (int i = 0; i < 4; ++i) m.input("x" + std::to_string(i), kFloat, Shape{int64_t{1} << 49});
    auto& n = m.node("Concat", {"x0", "x1", "x2", "x3"}, {"out"});
    set_attr(n, "axis", int64_t{0});
    add("concat_overflowing_dims", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{1, 3, 8, 8});
    m.weight("w", kFloat, Shape{8, 3, 3, 3});
    auto& n = m.node("Conv", {"x", "w"}, {"out"});
    set_attr(n, "strides", std::vector<int64_t>{1, 1});
    set_attr(n, "dilations", std::vector<int64_t>{int64_t{1} << 49, int64_t{1} << 49});
    add("conv_window_overflow", m.output("out"));
  }
}

// ---- integer folding edge values ----
inline void folding_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  add("int_div_by_zero", int_binary("Div", 7, 0));
  add("int_div_min_by_minus_one", int_binary("Div", INT64_MIN, -1));
  add("int_mod_by_zero", int_binary("Mod", 7, 0));
  add("int_mod_min_by_minus_one", int_binary("Mod", INT64_MIN, -1));
  add("int_add_overflow", int_binary("Add", INT64_MAX, 1));
  add("int_sub_overflow", int_binary("Sub", INT64_MIN, 1));
  add("int_mul_overflow", int_binary("Mul", kHuge, 4));
  add("int_pow_overflow", int_binary("Pow", 10, 40));
  add("int_abs_min", int_unary("Abs", INT64_MIN));
  add("int_neg_min", int_unary("Neg", INT64_MIN));
  {
    ModelBuilder m;
    m.ints("a", {kHuge, 4}, {2});
    auto& n = m.node("ReduceProd", {"a"}, {"y"});
    set_attr(n, "keepdims", int64_t{1});
    m.node("Reshape", {"x", "y"}, {"out"});
    m.input("x", kFloat, Shape{1});
    add("int_reduceprod_overflow", m.output("out"));
  }
  {
    ModelBuilder m;
    m.floats("f", {1e30f, NAN}, {2});
    auto& cast = m.node("Cast", {"f"}, {"y"});
    set_attr(cast, "to", int64_t{onnx::TensorProto::INT64});
    m.node("Reshape", {"x", "y"}, {"out"});
    m.input("x", kFloat, Shape{1});
    add("float_to_int_overflow", m.output("out"));
  }
}

// ---- generators to huge sizes ----
inline void generator_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  add("constant_of_shape_huge", generator("ConstantOfShape", {{kHuge, kHuge}}));
  add("constant_of_shape_negative", generator("ConstantOfShape", {{-1, 4}}));
  add("range_huge", generator("Range", {{0}, {INT64_MAX}, {1}}));
  add("range_zero_delta", generator("Range", {{0}, {10}, {0}}));
  add("range_min_to_max", generator("Range", {{INT64_MIN}, {INT64_MAX}, {INT64_MAX}}));
  {
    ModelBuilder m;
    m.ints("start", {0}, {}).floats("limit", {10.f}, {}).ints("delta", {1}, {});
    m.node("Range", {"start", "limit", "delta"}, {"out"});
    add("range_mixed_types", m.output("out"));
  }
  add("expand_huge", with_shape_input("Expand", {1}, {kHuge, kHuge}, {2}));
  add("tile_huge", with_shape_input("Tile", {2, 2}, {kHuge, kHuge}, {2}));
  add("tile_negative", with_shape_input("Tile", {2, 2}, {-1, 2}, {2}));
  add("reshape_huge", with_shape_input("Reshape", {4}, {kHuge, -1}, {2}));
  add("reshape_two_minus_one", with_shape_input("Reshape", {4}, {-1, -1}, {2}));
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{1, 1, 4, 4});
    m.floats("scales", {1.f, 1.f, 1e30f, 1e30f}, {4});
    m.node("Resize", {"x", "", "scales"}, {"out"});
    add("resize_huge_scales", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{1, 1, 4, 4});
    m.floats("scales", {1.f, 1.f, NAN, -2.f}, {4});
    m.node("Resize", {"x", "", "scales"}, {"out"});
    add("resize_nan_scales", m.output("out"));
  }
  add("shape_of_shape_chain", [] {
    ModelBuilder m;
    m.input("x", kFloat, Shape{64});
    std::string last = "x";
    for (int i = 0; i < 64; ++i) {
      m.node(i % 2 ? "Shape" : "ConstantOfShape", {last}, {"s" + std::to_string(i)});
      last = "s" + std::to_string(i);
    }
    return m.output(last);
  }());
}

// ---- shape ops with extreme attributes and inputs ----
inline void shape_op_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  {
    ModelBuilder m(18);
    m.input("x", kFloat, Shape{8});
    auto& n = m.node("Split", {"x"}, {"a", "b"});
    set_attr(n, "num_outputs", int64_t{1} << 40);
    set_attr(n, "axis", int64_t{0});
    add("split_huge_num_outputs", m.output("a"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{1, 4, 4, 4});
    auto& n = m.node("SpaceToDepth", {"x"}, {"out"});
    set_attr(n, "blocksize", int64_t{0});
    add("space_to_depth_zero_block", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{1, 4, 0, 0});
    auto& n = m.node("SpaceToDepth", {"x"}, {"out"});
    set_attr(n, "blocksize", int64_t{1} << 40);
    add("space_to_depth_huge_block_empty_input", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{0, kMaxTensorDim, kMaxTensorDim});
    m.node("Flatten", {"x"}, {"f"});
    auto& n = m.node("Concat", {"x", "x"}, {"out"});
    set_attr(n, "axis", int64_t{2});
    add("empty_tensor_with_huge_dims", m.output("out").output("f"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{10});
    m.ints("starts", {INT64_MAX}, {1}).ints("ends", {INT64_MIN}, {1}).ints("axes", {0}, {1}).ints("steps", {INT64_MIN}, {1});
    m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"out"});
    add("slice_extreme_steps", m.output("out"));
  }
  {
    ModelBuilder m;
    Shape dims(20, 1);
    m.input("a", kFloat, dims).input("b", kFloat, dims);
    auto& n = m.node("Einsum", {"a", "b"}, {"out"});
    set_attr(n, "equation", std::string("...,...->..."));
    add("einsum_long_ellipsis", m.output("out"));
  }
}

// ---- control flow ----
inline void control_flow_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  add("if_nested_40", nested_if(40));
  add("if_nested_300", nested_if(300));
  add("loop_nested_8_growing", nested_loops(8, 20));
  add("loop_nested_40_growing", nested_loops(40, 1000));
  add("loop_trip_count_max", nested_loops(0, INT64_MAX - 1));
  add("loop_trip_count_2e9", nested_loops(1, 2000000000));
}

// ---- sequences ----
inline void sequence_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  {
    ModelBuilder m;
    m.node("SequenceAt", {}, {"out"});
    add("sequence_at_no_inputs", m.output("out"));
  }
  {
    ModelBuilder m;
    m.node("SequenceLength", {}, {"out"});
    add("sequence_length_no_inputs", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{2});
    m.node("SequenceConstruct", {"x"}, {"s"});
    m.ints("pos", {INT64_MIN}, {});
    m.node("SequenceAt", {"s", "pos"}, {"out"});
    add("sequence_at_min_position", m.output("out"));
  }
  add("sequence_insert_chain_20000", sequence_chain(20000));
}

// ---- memory ----
inline void memory_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  add("folded_chain_5000", folded_chain(5000));
}

// ---- local functions ----
inline void function_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  add("recursive_local_function", recursive_function());
}

// ---- external data ----
inline void external_data_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  add("external_data_parent_path", external_weight("../../../../etc/shadow"));
  add("external_data_absolute_path", external_weight("/dev/zero"));
}

// ---- attributes and names ----
inline void attribute_and_name_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{2, 3});
    auto& n = m.node("Transpose", {"x"}, {"out"});
    set_attr(n, "perm", std::string("0,1"));
    add("attribute_wrong_type_perm", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{2, 3});
    auto& n = m.node("Softmax", {"x"}, {"out"});
    set_attr(n, "axis", std::vector<float>{1.f, 2.f});
    add("attribute_wrong_type_axis", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{2, 3});
    auto& n = m.node("Transpose", {"x"}, {"out"});
    set_attr(n, "perm", std::vector<int64_t>{INT64_MIN, INT64_MAX});
    add("attribute_extreme_perm", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{2});
    m.node("Relu", {"x"}, {"y"});
    m.node("Relu", {"x"}, {"y"});
    add("duplicate_output_names", m.output("y"));
  }
  {
    ModelBuilder m;
    m.input("", kFloat, Shape{2});
    m.node("Relu", {""}, {""});
    add("empty_names", m.output(""));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{2});
    m.node("Relu", {"x"}, {"y"}).set_name("");
    m.node("Relu", {"y"}, {"z"}).set_name("");
    add("empty_node_names", m.output("z"));
  }
  {
    ModelBuilder m;
    m.proto().mutable_opset_import(0)->set_version((int64_t{1} << 32) + 13);
    m.input("x", kFloat, Shape{2});
    m.node("Relu", {"x"}, {"out"});
    add("opset_2_to_the_32_plus_13", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{4});
    auto* s = m.graph().add_sparse_initializer();
    auto* values = s->mutable_values();
    values->set_name("w");
    values->set_data_type(kFloat);
    values->add_dims(1);
    values->add_float_data(1.f);
    s->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
    s->mutable_indices()->add_dims(1);
    s->mutable_indices()->add_int64_data(2);
    s->add_dims(4);
    m.node("Add", {"x", "w"}, {"out"});
    add("sparse_initializer", m.output("out"));
  }
}

// ---- more control flow ----
inline void scan_and_overflowing_repeat_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  add("scan_nested_40_long", nested_scans(40, int64_t{1} << 40));
  add("scan_nested_8", nested_scans(8, 1000));
  add("loop_nested_40_trip_count_max", nested_loops(40, INT64_MAX - 1));
}

// ---- local functions that grow without recursing, or recurse through others ----
inline void more_function_cases(std::vector<Case>& out) {
  {
    ModelBuilder m = calling_function("Ping");
    add_function(m.proto(), "Ping", {"Pong"});
    add_function(m.proto(), "Pong", {"Ping"});
    out.push_back({"mutually_recursive_functions", m.bytes()});
  }
  {
    // F40 calls F39 twice, ..., F1 calls F0 twice: 2^40 Relus from a 3 KB file.
    ModelBuilder m = calling_function("F40");
    add_function(m.proto(), "F0", {});
    for (int i = 1; i <= 40; ++i) add_function(m.proto(), "F" + std::to_string(i), {"F" + std::to_string(i - 1), "F" + std::to_string(i - 1)});
    out.push_back({"functions_doubling_40_levels", m.bytes()});
  }
  for (int fan_out : {30, 300}) {
    // F0's body is empty; F1..F4 call the function below fan_out times each: no node comes out,
    // but fan_out^4 calls would be expanded (the fuzzer found it at 11 s).
    ModelBuilder m = calling_function("F4");
    add_function(m.proto(), "F0", {});
    m.proto().mutable_functions(0)->clear_node();
    for (int i = 1; i <= 4; ++i)
      add_function(m.proto(), "F" + std::to_string(i), std::vector<std::string>(fan_out, "F" + std::to_string(i - 1)));
    out.push_back({"functions_calling_" + std::to_string(fan_out) + "_times_down_to_an_empty_body", m.bytes()});
  }
}

// ---- element types the schema does not allow together ----
inline void dtype_mismatch_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  for (const char* op : {"Add", "Concat", "Mul"}) {
    ModelBuilder m;
    m.ints("a", {2}, {1}).floats("b", {2.5f}, {1});
    auto& n = m.node(op, {"a", "b"}, {"y"});
    if (std::string(op) == "Concat") set_attr(n, "axis", int64_t{0});
    m.input("x", kFloat, Shape{4});
    m.node("Reshape", {"x", "y"}, {"out"});
    add(std::string("dtype_int_") + op + "_float_into_reshape", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("a", kFloat16, Shape{2, 3}).input("b", kFloat, Shape{3, 4});
    m.node("MatMul", {"a", "b"}, {"out"});
    add("dtype_matmul_fp16_by_fp32", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{4});
    m.floats("shape", {2.f, 2.f}, {2});
    m.node("Reshape", {"x", "shape"}, {"out"});
    add("dtype_reshape_float_shape", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("c", kBool, Shape{2});
    m.ints("a", {1, 2}, {2}).floats("b", {1e30f, NAN}, {2});
    m.node("Where", {"c", "a", "b"}, {"y"});
    m.input("x", kFloat, Shape{2});
    m.node("Reshape", {"x", "y"}, {"out"});
    add("dtype_where_int_float_into_reshape", m.output("out"));
  }
}

// ---- contrib and recent ops with too few or too many inputs and outputs ----
inline void arity_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  const std::string ms = "com.microsoft";
  add("contrib_fused_conv_one_input", contrib_node(ms, "FusedConv", {"x"}));
  add("contrib_attention_no_inputs", contrib_node(ms, "Attention", {}));
  add("contrib_qlinear_conv_three_inputs", contrib_node(ms, "QLinearConv", {"x", "s", "z"}));
  add("contrib_gqa_required_inputs_empty", contrib_node(ms, "GroupQueryAttention", {"", "", "", "", "", "", ""}));
  add("contrib_matmul_nbits_no_attributes", contrib_node(ms, "MatMulNBits", {"a", "b", "s"}));
  add("contrib_skip_layer_norm_two_inputs", contrib_node(ms, "SkipLayerNormalization", {"x", "skip"}));
  add("contrib_gelu_three_outputs", contrib_node(ms, "Gelu", {"x"}, 3));
  add("nchwc_conv_one_input", contrib_node("com.microsoft.nchwc", "Conv", {"x"}));
  add("nchwc_reorder_output_no_inputs", contrib_node("com.microsoft.nchwc", "ReorderOutput", {}));
  {
    ModelBuilder m(20);
    m.input("theta", kFloat, Shape{1, 2, 3});
    m.node("AffineGrid", {"theta"}, {"out"});
    add("affine_grid_missing_size", m.output("out"));
  }
  {
    ModelBuilder m(23);
    m.input("x", kFloat, Shape{2, 4});
    m.node("RMSNormalization", {"x"}, {"out"});
    add("rms_normalization_missing_scale", m.output("out"));
  }
}

// ---- wide and long graphs ----
inline void size_cases(std::vector<Case>& out) {
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{1, 2});
    auto& n = m.node("Concat", std::vector<std::string>(10000, "x"), {"out"});
    set_attr(n, "axis", int64_t{0});
    out.push_back({"concat_10000_inputs", m.output("out").bytes()});
  }
  {
    ModelBuilder m;
    m.input("x0", kFloat, Shape{8});
    for (int i = 0; i < 100000; ++i) m.node("Relu", {"x" + std::to_string(i)}, {"x" + std::to_string(i + 1)});
    out.push_back({"relu_chain_100000", m.output("x100000").bytes()});
  }
  {
    // One node past the model size limit (a 5.6 MB file): refused before the graph is built.
    ModelBuilder m;
    m.input("t0", kFloat, Shape{8});
    for (int i = 0; i < 300001; ++i) m.node("Abs", {"t" + std::to_string(i)}, {"t" + std::to_string(i + 1)});
    out.push_back({"abs_chain_300001", m.output("t300001").bytes()});
  }
  {
    ModelBuilder m(18);
    m.input("x", kFloat, Shape{600001});
    std::vector<std::string> outputs;
    for (int i = 0; i < 600001; ++i) outputs.push_back("s" + std::to_string(i));
    set_attr(m.node("Split", {"x"}, outputs), "axis", int64_t{0});
    out.push_back({"split_600001_outputs", m.output("s0").bytes()});
  }
}

inline std::vector<Case> cases() {
  std::vector<Case> out;
  dim_cases(out);
  folding_cases(out);
  generator_cases(out);
  shape_op_cases(out);
  control_flow_cases(out);
  scan_and_overflowing_repeat_cases(out);
  sequence_cases(out);
  memory_cases(out);
  function_cases(out);
  more_function_cases(out);
  external_data_cases(out);
  attribute_and_name_cases(out);
  dtype_mismatch_cases(out);
  arity_cases(out);
  size_cases(out);
  for (Case& c : feature_cases()) out.push_back(std::move(c));
  return out;
}

}  // namespace modelcost::testing::hostile
