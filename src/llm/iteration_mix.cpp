// IterationMix (llm.h): the text form of a serving iteration, PxCHUNK@PAST+D@CONTEXT.
#include <fmt/format.h>

#include <regex>

#include "modelcost/errors.h"
#include "modelcost/llm.h"

namespace modelcost {
namespace {

constexpr int64_t kMostTokens = int64_t(1) << 40;  // beyond any context a step could hold

int64_t field(const std::ssub_match& match, const std::string& text) {
  const std::string digits = match.str();
  if (digits.size() > 13 || std::stoll(digits) > kMostTokens)
    throw Error(kExitUsage, fmt::format("--iteration '{}': {} is too large", text, digits));
  return std::stoll(digits);
}

}  // namespace

std::string IterationMix::label() const {
  std::string text;
  if (prefills > 0) text = fmt::format("{}x{}@{}", prefills, chunk, past);
  if (decodes > 0) text += fmt::format("{}{}@{}", text.empty() ? "" : "+", decodes, context);
  return text;
}

IterationMix parse_iteration_mix(const std::string& text) {
  static const std::regex form(R"(^(?:(\d+)x(\d+)@(\d+))?(\+)?(?:(\d+)@(\d+))?$)");
  std::smatch m;
  const bool prefill = std::regex_match(text, m, form) && m[1].matched;
  if (m.empty() || (!m[1].matched && !m[5].matched) || (m[4].matched != (m[1].matched && m[5].matched)))
    throw Error(kExitUsage, fmt::format("--iteration '{}': expected PxCHUNK@PAST (prefill chunks), D@CONTEXT (decodes) "
                                        "or both joined by '+', e.g. 1x512@0+32@1024", text));
  IterationMix mix;
  if (prefill) {
    mix.prefills = field(m[1], text);
    mix.chunk = field(m[2], text);
    mix.past = field(m[3], text);
  }
  if (m[5].matched) {
    mix.decodes = field(m[5], text);
    mix.context = field(m[6], text);
  }
  if ((prefill && (mix.prefills < 1 || mix.chunk < 1)) || (m[5].matched && (mix.decodes < 1 || mix.context < 1)))
    throw Error(kExitUsage, fmt::format("--iteration '{}': counts, chunks and contexts must be positive", text));
  return mix;
}

}  // namespace modelcost
