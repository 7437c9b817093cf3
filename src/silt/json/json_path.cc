// JsonPathEvaluator: Spark's get_json_object. The path grammar and the
// evaluation cases follow Spark's JsonPathParser and GetJsonObject
// evaluatePath (Hive-compatible), re-expressed over simdjson's DOM.

#include <simdjson.h>

#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "silt/json/dom_internal.h"
#include "silt/json/json_path_internal.h"
#include "silt/json/json_decoder.h"

namespace silt::json {

namespace {

namespace dom = simdjson::dom;
using columnar::ColumnPtr;
using columnar::TypeId;
using internal::ValueKind;

using internal::Instr;
using internal::IsJavaSpace;
using internal::Op;
using internal::PathParser;
using internal::Style;

}  // namespace

struct JsonPathEvaluator::Impl {
  // One output level per nested [*] result buffer (Spark's temporary
  // generator over a StringWriter); reused across rows.
  struct Level {
    std::string buffer;
    internal::JsonGen gen;
  };

  std::vector<Instr> instrs;
  std::vector<Level> levels;
  internal::DomReader reader;
  std::unique_ptr<columnar::ColumnBuilder> builder;
  bool markers = false;

  bool IsSubscriptWildcardAt(size_t pc) const {
    return pc + 1 < instrs.size() && instrs[pc].op == Op::kSubscript &&
           instrs[pc + 1].op == Op::kWildcard;
  }

  // Evaluates instrs[pc..] against `value`, writing matches to levels[level].
  // Returns whether anything matched (Spark's "dirty").
  bool Eval(dom::element value, size_t pc, Style style, size_t level) {
    internal::JsonGen& gen = levels[level].gen;
    const ValueKind kind = internal::KindOf(value, markers);
    if (pc == instrs.size()) {
      if (kind == ValueKind::kString && style == Style::kRaw) {
        gen.Raw(internal::StringOf(value));
        return true;
      }
      if (kind == ValueKind::kArray && style == Style::kFlatten) {
        bool dirty = false;
        dom::array elements = value.get_array().value_unsafe();
        for (dom::element element : elements) {
          dirty |= Eval(element, pc, Style::kFlatten, level);
        }
        return dirty;
      }
      internal::CopyValue(value, markers, &gen);
      return true;
    }
    const Instr& instr = instrs[pc];
    if (kind == ValueKind::kObject && instr.op == Op::kKey) {
      // The parser always emits kKey followed by kNamed. The first member
      // with that exact name whose value is non-null and matches wins.
      const std::string& name = instrs[pc + 1].name;
      dom::object members = value.get_object().value_unsafe();
      for (dom::key_value_pair member : members) {
        if (member.key != name || member.value.is_null()) continue;
        if (Eval(member.value, pc + 2, style, level)) return true;
      }
      return false;
    }
    if (kind != ValueKind::kArray || instr.op != Op::kSubscript) return false;
    dom::array array = value.get_array().value_unsafe();
    if (instrs[pc + 1].op == Op::kWildcard) {
      if (IsSubscriptWildcardAt(pc + 2)) {
        // [*][*]: Hive's non-structure-preserving flatten.
        bool dirty = false;
        gen.StartArray();
        for (dom::element element : array) dirty |= Eval(element, pc + 4, Style::kFlatten, level);
        gen.EndArray();
        return dirty;
      }
      if (style != Style::kQuoted) {
        // Buffer the matches: a single match is emitted without the array.
        Style next = style == Style::kRaw ? Style::kQuoted : Style::kFlatten;
        Level& sub = levels[level + 1];
        sub.buffer.clear();
        sub.gen.Reset(&sub.buffer);
        sub.gen.StartArray();
        int64_t matched = 0;
        for (dom::element element : array) {
          if (Eval(element, pc + 2, next, level + 1)) ++matched;
        }
        sub.gen.EndArray();
        if (matched > 1) {
          gen.RawValue(sub.buffer);
        } else if (matched == 1) {
          gen.RawValue(std::string_view(sub.buffer).substr(1, sub.buffer.size() - 2));
        }
        return matched > 0;
      }
      bool dirty = false;
      gen.StartArray();
      for (dom::element element : array) dirty |= Eval(element, pc + 2, Style::kQuoted, level);
      gen.EndArray();
      return dirty;
    }
    // [index]; a following [*] switches to quoted output.
    Style next = IsSubscriptWildcardAt(pc + 2) ? Style::kQuoted : style;
    int64_t position = 0;
    for (dom::element element : array) {
      if (position++ == instrs[pc + 1].index) return Eval(element, pc + 2, next, level);
    }
    return false;
  }
};

JsonPathEvaluator::JsonPathEvaluator() : impl_(std::make_unique<Impl>()) {}
JsonPathEvaluator::~JsonPathEvaluator() = default;

Result<std::unique_ptr<JsonPathEvaluator>> JsonPathEvaluator::Make(std::string_view path) {
  SILT_ASSIGN_OR_RETURN(std::vector<Instr> instrs, PathParser(path).Parse());
  std::unique_ptr<JsonPathEvaluator> evaluator(new JsonPathEvaluator());
  Impl& impl = *evaluator->impl_;
  impl.instrs = std::move(instrs);
  // Each nested level consumes at least two instructions.
  impl.levels.resize(impl.instrs.size() / 2 + 2);
  impl.builder = std::make_unique<columnar::ColumnBuilder>(columnar::DataType::String());
  return evaluator;
}

Result<ColumnPtr> JsonPathEvaluator::Evaluate(const columnar::Column& json_strings) {
  if (json_strings.type == nullptr ||
      (json_strings.type->id() != TypeId::kString && json_strings.type->id() != TypeId::kBinary)) {
    return Status::InvalidArgument(
        "get_json_object input must be a STRING column, got ",
        json_strings.type == nullptr ? std::string("null") : json_strings.type->ToDdl());
  }
  Impl& impl = *impl_;
  columnar::ColumnBuilder& out = *impl.builder;
  out.Reserve(json_strings.length);
  Impl::Level& top = impl.levels[0];
  for (int64_t row_idx = 0; row_idx < json_strings.length; ++row_idx) {
    dom::element root;
    if (json_strings.IsNull(row_idx) ||
        !impl.reader.Parse(json_strings.StringValue(row_idx), &root)) {
      out.AppendNull();
      continue;
    }
    impl.markers = impl.reader.has_markers();
    top.buffer.clear();
    top.gen.Reset(&top.buffer);
    if (impl.Eval(root, 0, Style::kRaw, 0)) {
      out.AppendString(top.buffer);
    } else {
      out.AppendNull();
    }
  }
  return out.Finish();
}

}  // namespace silt::json
