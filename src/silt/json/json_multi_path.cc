// JsonMultiPathEvaluator: Spark's get_json_object (JsonPathParser and
// GetJsonObject evaluatePath, Hive-compatible) over simdjson's DOM, many
// compiled paths over one parsed document. JsonPathEvaluator is its one-path use.

#include "silt/json/json_multi_path.h"

#include <simdjson.h>

#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/json/dom_internal.h"
#include "silt/json/json_path_internal.h"

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

// One compiled path with its output buffers.
struct PathProgram {
  // One output level per nested [*] result buffer (Spark's temporary
  // generator over a StringWriter); reused across rows.
  struct Level {
    std::string buffer;
    internal::JsonGen gen;
  };

  std::string text;
  std::vector<Instr> instrs;
  std::vector<Level> levels;
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

}  // namespace

struct JsonMultiPathEvaluator::Impl {
  std::vector<std::unique_ptr<PathProgram>> paths;
  internal::DomReader reader;
};

JsonMultiPathEvaluator::JsonMultiPathEvaluator() : impl_(std::make_unique<Impl>()) {}
JsonMultiPathEvaluator::~JsonMultiPathEvaluator() = default;

std::unique_ptr<JsonMultiPathEvaluator> JsonMultiPathEvaluator::Make() {
  return std::unique_ptr<JsonMultiPathEvaluator>(new JsonMultiPathEvaluator());
}

int JsonMultiPathEvaluator::num_paths() const { return static_cast<int>(impl_->paths.size()); }

Result<int> JsonMultiPathEvaluator::AddPath(std::string_view path) {
  for (size_t path_idx = 0; path_idx < impl_->paths.size(); ++path_idx) {
    if (impl_->paths[path_idx]->text == path) return static_cast<int>(path_idx);
  }
  SILT_ASSIGN_OR_RETURN(std::vector<Instr> instrs, PathParser(path).Parse());
  auto program = std::make_unique<PathProgram>();
  program->text = std::string(path);
  program->instrs = std::move(instrs);
  // Each nested level consumes at least two instructions.
  program->levels.resize(program->instrs.size() / 2 + 2);
  program->builder = std::make_unique<columnar::ColumnBuilder>(columnar::DataType::String());
  impl_->paths.push_back(std::move(program));
  return static_cast<int>(impl_->paths.size() - 1);
}

Result<std::vector<ColumnPtr>> JsonMultiPathEvaluator::Evaluate(
    const columnar::Column& json_strings, const uint8_t* rows) {
  if (json_strings.type == nullptr ||
      (json_strings.type->id() != TypeId::kString && json_strings.type->id() != TypeId::kBinary)) {
    return Status::InvalidArgument(
        "get_json_object input must be a STRING column, got ",
        json_strings.type == nullptr ? std::string("null") : json_strings.type->ToDdl());
  }
  Impl& impl = *impl_;
  for (const std::unique_ptr<PathProgram>& program : impl.paths) {
    program->builder->Reserve(json_strings.length);
  }
  for (int64_t row_idx = 0; row_idx < json_strings.length; ++row_idx) {
    dom::element root;
    if ((rows != nullptr && !columnar::GetBit(rows, row_idx)) || json_strings.IsNull(row_idx) ||
        !impl.reader.Parse(json_strings.StringValue(row_idx), &root)) {
      for (const std::unique_ptr<PathProgram>& program : impl.paths) program->builder->AppendNull();
      continue;
    }
    const bool markers = impl.reader.has_markers();
    for (const std::unique_ptr<PathProgram>& program : impl.paths) {
      PathProgram::Level& top = program->levels[0];
      program->markers = markers;
      top.buffer.clear();
      top.gen.Reset(&top.buffer);
      if (program->Eval(root, 0, Style::kRaw, 0)) {
        program->builder->AppendString(top.buffer);
      } else {
        program->builder->AppendNull();
      }
    }
  }
  std::vector<ColumnPtr> out;
  out.reserve(impl.paths.size());
  for (const std::unique_ptr<PathProgram>& program : impl.paths) {
    out.push_back(program->builder->Finish());
  }
  return out;
}

}  // namespace silt::json
