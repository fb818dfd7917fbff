#include "report/torch_scope.h"

#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

#include <vector>

namespace modelcost {
namespace {

// NodeProto.metadata_props is field 9 since ONNX 1.16; the ONNX this builds with (1.12) does not
// know it, so protobuf keeps it among the unknown fields.
constexpr int kNodeMetadataPropsField = 9;
const char* const kNameScopesKey = "pkg.torch.onnx.name_scopes";

// The quoted items of a Python list repr: "['', 'a', \"b'c\"]" -> {"", "a", "b'c"}.
std::vector<std::string> quoted_items(const std::string& text) {
  std::vector<std::string> items;
  for (size_t i = 0; i < text.size(); ++i) {
    const char quote = text[i];
    if (quote != '\'' && quote != '"') continue;
    std::string item;
    for (++i; i < text.size() && text[i] != quote; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) ++i;
      item += text[i];
    }
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace

std::string scope_of_name_scopes(const std::string& value) {
  const std::vector<std::string> items = quoted_items(value);
  if (items.size() < 2) return "";
  std::string scope;
  for (char ch : items[items.size() - 2]) scope += ch == '.' ? '/' : ch;
  return scope.empty() ? "" : "/" + scope;
}

std::optional<std::string> torch_module_scope(const Node& node) {
  if (!node.proto) return std::nullopt;
  const auto& unknown = node.proto->GetReflection()->GetUnknownFields(*node.proto);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField& field = unknown.field(i);
    if (field.number() != kNodeMetadataPropsField || field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(field.length_delimited()) && entry.key() == kNameScopesKey)
      return scope_of_name_scopes(entry.value());
  }
  return std::nullopt;
}

}  // namespace modelcost
