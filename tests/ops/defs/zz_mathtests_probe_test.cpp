#include <gtest/gtest.h>
#include "ops/defs/nn_test_support.h"
namespace modelcost::testing {
TEST(ProbeX, Things) {
  { ModelBuilder b(13); b.input("x", kFloat, Shape{1, 8, 2, 3});
    set_attr(b.node("DepthToSpace", {"x"}, {"d"}), "blocksize", int64_t{1} << 32);
    try { analyse(b); printf("d2s accepted\n"); } catch (const Error& e) { printf("d2s: %s\n", e.what()); } }
  { ModelBuilder b(13); b.input("x", kFloat, Shape{2});
    set_attr(b.node("Cast", {"x"}, {"c"}), "to", int64_t{999});
    try { auto r = analyse(b); printf("cast accepted dtype %d\n", r->tensor("c").dtype); } catch (const Error& e) { printf("cast: %s\n", e.what()); } }
  { ModelBuilder b(13); b.ints("v", {4, 9}).floats("half", {0.5f}, {});
    b.node("Pow", {"v", "half"}, {"p"});
    auto r = analyse(b); printf("pow value %s\n", r->tensor("p").value ? std::to_string(r->tensor("p").value->ints[0]).c_str() : "none"); }
  { ModelBuilder b(13); b.ints("v", {4, 9}).floats("lo", {}, {0});
    b.node("Clip", {"v", "lo"}, {"c"});
    try { auto r = analyse(b); printf("clip ok\n"); } catch (const Error& e) { printf("clip: %s\n", e.what()); } }
  { ModelBuilder b(13); b.input("x", kFloat, Shape{2,3}).ints("idx", {0,2,1,1}, {2,2});
    b.node("Gather", {"x", "idx"}, {"g"});
    try { auto r = analyse(b); printf("gather shape %s\n", shape_to_string(r->shape("g")).c_str()); } catch (const Error& e) { printf("g: %s\n", e.what()); } }
  { ModelBuilder b(18); b.input("x", kFloat, Shape{5});
    set_attr(b.node("Split", {"x"}, {"a","b","c","d"}), "num_outputs", int64_t{4});
    try { analyse(b); printf("split accepted\n"); } catch (const Error& e) { printf("split: %s\n", e.what()); } }
  { ModelBuilder b(13); b.input("x", kFloat, Shape{2,3}).ints("r", {INT64_MAX, 2});
    b.node("Tile", {"x", "r"}, {"t"});
    try { auto r = analyse(b); printf("tile %s\n", shape_to_string(r->shape("t")).c_str()); } catch (const Error& e) { printf("tile: %s\n", e.what()); } }
  { ModelBuilder b(13); b.input("x", kFloat, Shape{2,3}).floats("s", {1.f, 1e30f});
    b.node("Resize", {"x", "", "s"}, {"r"});
    try { auto r = analyse(b); printf("resize %s\n", shape_to_string(r->shape("r")).c_str()); } catch (const Error& e) { printf("resize: %s\n", e.what()); } }
  { ModelBuilder b(13); b.floats("a", {0.f}, {}).floats("l", {NAN}, {}).floats("d", {1.f}, {});
    b.node("Range", {"a", "l", "d"}, {"r"});
    try { auto r = analyse(b); printf("range %s\n", shape_to_string(r->shape("r")).c_str()); } catch (const Error& e) { printf("range: %s\n", e.what()); } }
  { ModelBuilder b(13); b.input("x", kFloat, Shape{2,3}).ints("p", {INT64_MAX, 0, INT64_MAX, 0});
    b.node("Pad", {"x", "p"}, {"r"});
    try { auto r = analyse(b); printf("pad %s\n", shape_to_string(r->shape("r")).c_str()); } catch (const Error& e) { printf("pad: %s\n", e.what()); } }
  { ModelBuilder b(13); b.input("x", kFloat, Shape{2,3}).ints("s", {INT64_MAX, 3});
    b.node("Expand", {"x", "s"}, {"r"});
    try { auto r = analyse(b); printf("expand %s\n", shape_to_string(r->shape("r")).c_str()); } catch (const Error& e) { printf("expand: %s\n", e.what()); } }
  { ModelBuilder b(13); b.input("x", kFloat, Shape{2,3}).ints("s", {-7});
    b.node("Reshape", {"x", "s"}, {"r"});
    try { auto r = analyse(b); printf("reshape %s\n", shape_to_string(r->shape("r")).c_str()); } catch (const Error& e) { printf("reshape: %s\n", e.what()); } }
  { ModelBuilder b(13); b.input("x", kFloat, Shape{4, 4});
    set_attr(b.node("Einsum", {"x"}, {"e"}), "equation", std::string("ij->k"));
    try { auto r = analyse(b); printf("einsum accepted\n"); } catch (const Error& e) { printf("einsum: %s\n", e.what()); } }
  { ModelBuilder b(13); b.input("x", kFloat, Shape{4, 4});
    set_attr(b.node("Einsum", {"x"}, {"e"}), "equation", std::string("i.j"));
    try { auto r = analyse(b); printf("einsum2 accepted %s\n", shape_to_string(r->shape("e")).c_str()); } catch (const Error& e) { printf("einsum2: %s\n", e.what()); } }
}
}
