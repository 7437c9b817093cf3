// JsonMultiPathEvaluator: Spark's get_json_object (JsonPathParser and
// GetJsonObject evaluatePath, Hive-compatible) over simdjson's DOM, many
// compiled paths over one parsed document. JsonPathEvaluator is its one-path use.
// The result columns are written by multi_path_writer_internal.h; a captured
// scalar's fused cast is capture_cast.h's.

#include "silt/json/json_multi_path.h"

#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <string>
#include <utility>
#include <vector>

#include "silt/columnar/column.h"
#include "silt/json/dom_internal.h"
#include "silt/json/flat_object_internal.h"
#include "silt/json/json_path_internal.h"
#include "silt/json/multi_path_writer_internal.h"

namespace silt::json {

namespace {

namespace dom = simdjson::dom;
using columnar::ColumnPtr;
using columnar::TypeId;
using internal::ValueKind;

using internal::Instr;
using internal::Op;
using internal::PathParser;
using internal::Style;

bool HasStandIn(std::string_view text) {
  uint32_t unit = 0;
  for (size_t pos = 0; pos < text.size(); ++pos) {
    if (internal::StandInAt(text, pos, &unit) != 0) return true;
  }
  return false;
}

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
  // A json_tuple field (JsonTupleFieldPath): the member name; instrs empty.
  bool tuple_field = false;
  std::string tuple_key;
  std::vector<Level> levels;
  internal::ResultWriter results;
  // While inactive: the all-NULL result of the last batch's length.
  ColumnPtr inactive_nulls;
  bool markers = false;
  // Whether strings hold stand-ins of unpaired surrogates, and whether a raw
  // write of one failed (the whole result is then NULL).
  bool lone_surrogates = false;
  bool raw_failed = false;
  // AddPath's capture_scalars (only for paths without wildcards, whose
  // single match is the result): results are CapturedType() columns.
  bool capture = false;
  // AddPath's cast and ANSI setting (with capture).
  CaptureCast cast = CaptureCast::kNone;
  bool ansi = false;
  bool active = true;
  // The scalar captured for the current row (0: none).
  int8_t captured_kind = 0;
  int64_t captured_bits = 0;

  // Records a number or boolean result of a capturing path.
  bool Capture(dom::element value, ValueKind kind) {
    switch (kind) {
      case ValueKind::kInt64:
        captured_kind = static_cast<int8_t>(CapturedKind::kInt64);
        captured_bits = value.get_int64().value_unsafe();
        return true;
      case ValueKind::kUint64:
        captured_kind = static_cast<int8_t>(CapturedKind::kUint64);
        captured_bits = std::bit_cast<int64_t>(value.get_uint64().value_unsafe());
        return true;
      case ValueKind::kDouble:
        captured_kind = static_cast<int8_t>(CapturedKind::kDouble);
        captured_bits = std::bit_cast<int64_t>(value.get_double().value_unsafe());
        return true;
      case ValueKind::kBool:
        captured_kind = static_cast<int8_t>(CapturedKind::kBool);
        captured_bits = value.get_bool().value_unsafe() ? 1 : 0;
        return true;
      default: return false;
    }
  }

  // Writes row `row`'s result (`matched`: Eval's result; unmatched is NULL).
  void AppendResult(int64_t row, bool matched, const std::string& text) {
    if (!matched) return;
    if (capture && captured_kind != 0) {
      results.Captured(row, captured_kind, captured_bits);
    } else {
      results.Text(row, text);
    }
  }

  // json_tuple: the last member named tuple_key whose value is not null.
  bool EvalTupleField(dom::element root) {
    if (internal::KindOf(root, markers) != ValueKind::kObject) return false;
    dom::element chosen;
    bool found = false;
    dom::object members = root.get_object().value_unsafe();
    for (dom::key_value_pair member : members) {
      if (member.key != tuple_key || member.value.is_null()) continue;
      chosen = member.value;
      found = true;
    }
    return found && Eval(chosen, 0, Style::kRaw, 0);
  }

  // A path `$.name`: its result comes from the first non-null member `name`
  // of a top-level object (Eval at the end of the program always matches,
  // except a raw write that fails, which makes the result NULL).
  bool IsTopLevelKey() const {
    return !tuple_field && instrs.size() == 2 && instrs[0].op == Op::kKey &&
           instrs[1].op == Op::kNamed;
  }

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
      if (capture && Capture(value, kind)) return true;
      if (kind == ValueKind::kString && style == Style::kRaw) {
        const std::string_view text = internal::StringOf(value);
        if (lone_surrogates && HasStandIn(text)) {
          // Jackson's raw write fails on an unpaired surrogate: no result.
          raw_failed = true;
          return false;
        }
        gen.Raw(text);
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
  // Hive's parser features: single quotes and raw control characters.
  internal::DomReader reader{internal::JacksonFeatures::SparkJsonPath()};
  internal::FlatObjectScanner scanner;
  internal::KeyNames key_names;
};

JsonMultiPathEvaluator::JsonMultiPathEvaluator() : impl_(std::make_unique<Impl>()) {}
JsonMultiPathEvaluator::~JsonMultiPathEvaluator() = default;

std::unique_ptr<JsonMultiPathEvaluator> JsonMultiPathEvaluator::Make() {
  return std::unique_ptr<JsonMultiPathEvaluator>(new JsonMultiPathEvaluator());
}

int JsonMultiPathEvaluator::num_paths() const { return static_cast<int>(impl_->paths.size()); }

void JsonMultiPathEvaluator::SetActive(int path_index, bool active) {
  impl_->paths[static_cast<size_t>(path_index)]->active = active;
}

constexpr std::string_view kTupleFieldPrefix = "\x01json_tuple:";

std::string JsonTupleFieldPath(std::string_view key) {
  return std::string(kTupleFieldPrefix) + std::string(key);
}

Result<int> JsonMultiPathEvaluator::AddPath(std::string_view path, bool capture_scalars,
                                            CaptureCast cast, bool ansi) {
  const bool tuple_field = path.substr(0, kTupleFieldPrefix.size()) == kTupleFieldPrefix;
  std::vector<Instr> instrs;
  if (!tuple_field) {
    SILT_ASSIGN_OR_RETURN(instrs, PathParser(path).Parse());
  }
  // Wildcard results are built from several matches: never captured.
  const bool capture =
      capture_scalars && std::none_of(instrs.begin(), instrs.end(),
                                      [](const Instr& instr) { return instr.op == Op::kWildcard; });
  // The cast and its ANSI setting only matter to a capturing path.
  if (!capture) cast = CaptureCast::kNone;
  if (cast == CaptureCast::kNone) ansi = false;
  for (size_t path_idx = 0; path_idx < impl_->paths.size(); ++path_idx) {
    const PathProgram& existing = *impl_->paths[path_idx];
    if (existing.text == path && existing.capture == capture && existing.cast == cast &&
        existing.ansi == ansi) {
      return static_cast<int>(path_idx);
    }
  }
  auto program = std::make_unique<PathProgram>();
  program->text = std::string(path);
  program->tuple_field = tuple_field;
  if (tuple_field) program->tuple_key = std::string(path.substr(kTupleFieldPrefix.size()));
  program->instrs = std::move(instrs);
  program->capture = capture;
  program->cast = cast;
  program->ansi = ansi;
  // Each nested level consumes at least two instructions.
  program->levels.resize(program->instrs.size() / 2 + 2);
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
  std::vector<PathProgram*> active;
  // `$.name` paths are served by one pass over the top-level members of a
  // row instead of one pass per path; the others run their programs.
  std::vector<PathProgram*> keys;
  std::vector<PathProgram*> general;
  for (const std::unique_ptr<PathProgram>& program : impl.paths) {
    if (!program->active) continue;
    program->results.Start(json_strings.length, program->capture, program->cast, program->ansi);
    active.push_back(program.get());
    if (program->IsTopLevelKey()) {
      keys.push_back(program.get());
    } else {
      general.push_back(program.get());
    }
  }
  // Per key path and row: 0 no member yet, 1 matched, 2 its first non-null
  // member failed to write (NULL, as the per-path loop gives).
  std::vector<uint8_t> key_state(keys.size());
  // Only `$.name` paths: a flat object (the usual event payload) is read by
  // the single-pass scanner without building a DOM tape; any other text
  // takes the DOM path below.
  const bool scan_flat = general.empty() && !keys.empty();
  if (scan_flat) {
    std::vector<internal::KeyNames::KeyPath> key_paths;
    for (PathProgram* program : keys)
      key_paths.push_back({program->instrs[1].name, &program->results});
    impl.key_names.Build(key_paths);
  }
  // A row left unwritten is NULL (ResultWriter): skipped and NULL inputs,
  // malformed JSON and missing paths write nothing.
  for (int64_t row_idx = 0; row_idx < json_strings.length; ++row_idx) {
    if ((rows != nullptr && !columnar::GetBit(rows, row_idx)) || json_strings.IsNull(row_idx)) {
      continue;
    }
    const std::string_view text = json_strings.StringValue(row_idx);
    if (scan_flat && impl.scanner.Scan(text)) {
      impl.key_names.WriteRow(row_idx, impl.scanner.members());
      continue;
    }
    dom::element root;
    if (impl.reader.Parse(text, &root) != internal::ParseOutcome::kValue) continue;
    const bool markers = impl.reader.has_markers();
    const bool lone = impl.reader.has_lone_surrogates();
    auto start_row = [&](PathProgram* program) {
      PathProgram::Level& top = program->levels[0];
      program->markers = markers;
      program->raw_failed = false;
      if (program->lone_surrogates != lone) {
        // Rows with unpaired surrogates are rare: switch the writers only then.
        program->lone_surrogates = lone;
        for (PathProgram::Level& level : program->levels) level.gen.set_lone_surrogates(lone);
      }
      top.buffer.clear();
      top.gen.Reset(&top.buffer);
      program->captured_kind = 0;
    };
    if (!keys.empty()) {
      std::fill(key_state.begin(), key_state.end(), 0);
      for (PathProgram* program : keys) start_row(program);
      if (internal::KindOf(root, markers) == ValueKind::kObject) {
        size_t pending = keys.size();
        dom::object members = root.get_object().value_unsafe();
        for (dom::key_value_pair member : members) {
          if (member.value.is_null()) continue;
          for (size_t key_idx = 0; key_idx < keys.size(); ++key_idx) {
            if (key_state[key_idx] != 0 || member.key != keys[key_idx]->instrs[1].name) continue;
            const bool written =
                keys[key_idx]->Eval(member.value, 2, Style::kRaw, 0) && !keys[key_idx]->raw_failed;
            key_state[key_idx] = written ? 1 : 2;
            --pending;
          }
          if (pending == 0) break;
        }
      }
      for (size_t key_idx = 0; key_idx < keys.size(); ++key_idx) {
        keys[key_idx]->AppendResult(row_idx, key_state[key_idx] == 1,
                                    keys[key_idx]->levels[0].buffer);
      }
    }
    for (PathProgram* program : general) {
      start_row(program);
      PathProgram::Level& top = program->levels[0];
      const bool matched = (program->tuple_field ? program->EvalTupleField(root)
                                                 : program->Eval(root, 0, Style::kRaw, 0)) &&
                           !program->raw_failed;
      program->AppendResult(row_idx, matched, top.buffer);
    }
  }
  std::vector<ColumnPtr> out;
  out.reserve(impl.paths.size());
  for (const std::unique_ptr<PathProgram>& program : impl.paths) {
    if (program->active) {
      out.push_back(program->results.Finish());
      continue;
    }
    // Columns are immutable: an inactive path hands out one all-NULL
    // column while batches keep their length.
    if (program->inactive_nulls == nullptr ||
        program->inactive_nulls->length != json_strings.length) {
      program->inactive_nulls = columnar::MakeNullColumn(
          program->cast != CaptureCast::kNone ? CapturedCastType(program->cast)
          : program->capture                  ? CapturedType()
                                              : columnar::DataType::String(),
          json_strings.length);
    }
    out.push_back(program->inactive_nulls);
  }
  return out;
}

}  // namespace silt::json
