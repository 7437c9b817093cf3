// JsonMultiPathEvaluator: Spark's get_json_object (JsonPathParser and
// GetJsonObject evaluatePath, Hive-compatible) over simdjson's DOM, many
// compiled paths over one parsed document. JsonPathEvaluator is its one-path use.

#include "silt/json/json_multi_path.h"

#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "silt/columnar/column.h"
#include "silt/json/dom_internal.h"
#include "silt/json/flat_object_internal.h"
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

bool HasStandIn(std::string_view text) {
  uint32_t unit = 0;
  for (size_t pos = 0; pos < text.size(); ++pos) {
    if (internal::StandInAt(text, pos, &unit) != 0) return true;
  }
  return false;
}

int64_t BitmapBytes(int64_t bits) { return (bits + 7) / 8; }

// The result columns of one path over one input column, written in place:
// Start() sizes the offsets, values and validity buffers for the whole
// batch (zero-filled, so a null costs one offset store), each row then
// writes its slots without a builder's per-type dispatch, and Finish()
// hands the buffers to the columns. A capturing path's `kind` and `bits`
// children are valid on the same rows and share one validity buffer.
class ResultWriter {
 public:
  void Start(int64_t rows, bool capture) {
    rows_ = rows;
    row_ = 0;
    texts_ = 0;
    captured_ = 0;
    capture_ = capture;
    text_validity_ = NewZeroed(BitmapBytes(rows));
    text_offsets_ = NewZeroed((rows + 1) * static_cast<int64_t>(sizeof(int32_t)));
    text_data_ = std::make_shared<Buffer>();
    if (data_reserve_ > 0) text_data_->Reserve(data_reserve_);
    offsets_ = text_offsets_->mutable_data_as<int32_t>();
    if (capture) {
      captured_validity_ = NewZeroed(BitmapBytes(rows));
      kinds_ = NewZeroed(rows);
      bits_ = NewZeroed(rows * static_cast<int64_t>(sizeof(int64_t)));
    }
  }

  // A row without a result (NULL).
  void Null() {
    offsets_[row_ + 1] = offsets_[row_];
    ++row_;
  }
  void Text(std::string_view text) {
    text_data_->Append(text.data(), static_cast<int64_t>(text.size()));
    offsets_[row_ + 1] = static_cast<int32_t>(text_data_->size());
    columnar::SetBit(text_validity_->mutable_data(), row_);
    ++texts_;
    ++row_;
  }
  // REQUIRES: Start(rows, capture = true).
  void Captured(int8_t kind, int64_t bits) {
    offsets_[row_ + 1] = offsets_[row_];
    kinds_->mutable_data_as<int8_t>()[row_] = kind;
    bits_->mutable_data_as<int64_t>()[row_] = bits;
    columnar::SetBit(captured_validity_->mutable_data(), row_);
    ++captured_;
    ++row_;
  }

  // REQUIRES: every row of Start() written.
  ColumnPtr Finish() {
    data_reserve_ = text_data_->size();
    auto text = std::make_shared<columnar::Column>();
    text->type = columnar::DataType::String();
    text->length = rows_;
    text->null_count = rows_ - texts_;
    if (text->null_count > 0) text->validity = std::move(text_validity_);
    text->values = std::move(text_offsets_);
    text->data = std::move(text_data_);
    text_validity_ = nullptr;
    if (!capture_) return text;
    auto column = std::make_shared<columnar::Column>();
    column->type = CapturedType();
    column->length = rows_;
    column->children.push_back(std::move(text));
    for (int child = 0; child < 2; ++child) {
      auto scalar = std::make_shared<columnar::Column>();
      scalar->type = child == 0 ? columnar::DataType::Byte() : columnar::DataType::Long();
      scalar->length = rows_;
      scalar->null_count = rows_ - captured_;
      if (scalar->null_count > 0) scalar->validity = captured_validity_;
      scalar->values = child == 0 ? std::move(kinds_) : std::move(bits_);
      column->children.push_back(std::move(scalar));
    }
    captured_validity_ = nullptr;
    return column;
  }

 private:
  static BufferPtr NewZeroed(int64_t size) {
    auto buffer = std::make_shared<Buffer>();
    buffer->Resize(size);
    return buffer;
  }

  int64_t rows_ = 0;
  int64_t row_ = 0;
  int64_t texts_ = 0;
  int64_t captured_ = 0;
  bool capture_ = false;
  // The previous batch's text bytes: the next batch's first reservation.
  int64_t data_reserve_ = 0;
  int32_t* offsets_ = nullptr;
  BufferPtr text_validity_;
  BufferPtr text_offsets_;
  BufferPtr text_data_;
  BufferPtr captured_validity_;
  BufferPtr kinds_;
  BufferPtr bits_;
};

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
  ResultWriter results;
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

  // Writes this row's result (`matched`: Eval's result).
  void AppendResult(bool matched, const std::string& text) {
    if (!matched) {
      results.Null();
    } else if (capture && captured_kind != 0) {
      results.Captured(captured_kind, captured_bits);
    } else {
      results.Text(text);
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

namespace {

// The distinct names of a batch's `$.name` paths, found by one probe of a
// small open-addressing table (keyed by a key's length and three of its
// bytes) instead of comparing every member with every name.
class KeyNames {
 public:
  // `names`: one per `$.name` path, repeats allowed (`$.a` and `$['a']`).
  void Build(const std::vector<std::string_view>& names) {
    distinct_.clear();
    name_of_path_.clear();
    size_t slots = 16;
    while (slots < names.size() * 2) slots *= 2;
    slots_.assign(slots, -1);
    mask_ = slots - 1;
    for (std::string_view name : names) {
      int found = Find(name);
      if (found < 0) {
        found = static_cast<int>(distinct_.size());
        distinct_.push_back(name);
        // An empty name is never matched by the scanner's rows (as before
        // the table): it stays out of it.
        if (!name.empty()) {
          size_t slot = Hash(name) & mask_;
          while (slots_[slot] >= 0) slot = (slot + 1) & mask_;
          slots_[slot] = found;
        }
      }
      name_of_path_.push_back(found);
    }
    first_.resize(distinct_.size());
  }

  // The distinct name equal to `key`, or -1.
  int Find(std::string_view key) const {
    if (key.empty()) return -1;
    for (size_t slot = Hash(key) & mask_;; slot = (slot + 1) & mask_) {
      const int index = slots_[slot];
      if (index < 0) return -1;
      if (internal::SameKey(distinct_[static_cast<size_t>(index)], key)) return index;
    }
  }

  // Per row: the first non-null member of each distinct name (null: none).
  const std::vector<const internal::FlatMember*>& FirstMembers(
      const std::vector<internal::FlatMember>& members) {
    std::fill(first_.begin(), first_.end(), nullptr);
    for (const internal::FlatMember& member : members) {
      if (member.kind == internal::FlatKind::kNull) continue;
      const int index = Find(member.key);
      if (index >= 0 && first_[static_cast<size_t>(index)] == nullptr) {
        first_[static_cast<size_t>(index)] = &member;
      }
    }
    return first_;
  }
  int name_of_path(size_t key_idx) const { return name_of_path_[key_idx]; }

 private:
  static size_t Hash(std::string_view key) {
    const auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<uint8_t>(key[i])); };
    const size_t h =
        key.size() ^ (byte(0) << 6) ^ (byte(key.size() / 2) << 12) ^ (byte(key.size() - 1) << 18);
    return (h * 0x9E3779B97F4A7C15ULL) >> 40;
  }

  std::vector<std::string_view> distinct_;
  std::vector<int> name_of_path_;
  std::vector<int> slots_;
  size_t mask_ = 0;
  std::vector<const internal::FlatMember*> first_;
};

// The `$.name` results of one row the scanner read: as the DOM loop gives
// them, the first non-null member of each name, strings unquoted, numbers
// and booleans captured or re-printed.
void AppendFlatKeys(const std::vector<internal::FlatMember>& members,
                    const std::vector<PathProgram*>& keys, KeyNames* names) {
  const std::vector<const internal::FlatMember*>& first = names->FirstMembers(members);
  for (size_t key_idx = 0; key_idx < keys.size(); ++key_idx) {
    PathProgram* program = keys[key_idx];
    const internal::FlatMember* found = first[static_cast<size_t>(names->name_of_path(key_idx))];
    ResultWriter& results = program->results;
    if (found == nullptr) {
      results.Null();
      continue;
    }
    if (found->kind == internal::FlatKind::kString) {
      results.Text(found->text);
      continue;
    }
    CapturedKind kind = CapturedKind::kBool;
    int64_t bits = 0;
    switch (found->kind) {
      case internal::FlatKind::kInt64:
        kind = CapturedKind::kInt64;
        bits = found->int_value;
        break;
      case internal::FlatKind::kDouble:
        kind = CapturedKind::kDouble;
        bits = std::bit_cast<int64_t>(found->double_value);
        break;
      case internal::FlatKind::kTrue: bits = 1; break;
      default: break;  // kFalse (kNull and kString never get here)
    }
    if (program->capture) {
      results.Captured(static_cast<int8_t>(kind), bits);
    } else {
      std::string& text = program->levels[0].buffer;
      text.clear();
      AppendCapturedText(kind, bits, &text);
      results.Text(text);
    }
  }
}

}  // namespace

struct JsonMultiPathEvaluator::Impl {
  std::vector<std::unique_ptr<PathProgram>> paths;
  // Hive's parser features: single quotes and raw control characters.
  internal::DomReader reader{internal::JacksonFeatures::SparkJsonPath()};
  internal::FlatObjectScanner scanner;
  KeyNames key_names;
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

const columnar::TypePtr& CapturedType() {
  static const columnar::TypePtr type = columnar::DataType::Struct({
      columnar::Field{"text", columnar::DataType::String(), true},
      columnar::Field{"kind", columnar::DataType::Byte(), true},
      columnar::Field{"bits", columnar::DataType::Long(), true},
  });
  return type;
}

void AppendCapturedText(CapturedKind kind, int64_t bits, std::string* out) {
  internal::JsonGen gen;
  gen.Reset(out);
  switch (kind) {
    case CapturedKind::kInt64: gen.Int64(bits); break;
    case CapturedKind::kUint64: gen.Uint64(std::bit_cast<uint64_t>(bits)); break;
    case CapturedKind::kDouble: gen.Double(std::bit_cast<double>(bits)); break;
    case CapturedKind::kBool: gen.Bool(bits != 0); break;
  }
}

constexpr std::string_view kTupleFieldPrefix = "\x01json_tuple:";

std::string JsonTupleFieldPath(std::string_view key) {
  return std::string(kTupleFieldPrefix) + std::string(key);
}

Result<int> JsonMultiPathEvaluator::AddPath(std::string_view path, bool capture_scalars) {
  const bool tuple_field = path.substr(0, kTupleFieldPrefix.size()) == kTupleFieldPrefix;
  std::vector<Instr> instrs;
  if (!tuple_field) {
    SILT_ASSIGN_OR_RETURN(instrs, PathParser(path).Parse());
  }
  // Wildcard results are built from several matches: never captured.
  const bool capture =
      capture_scalars && std::none_of(instrs.begin(), instrs.end(),
                                      [](const Instr& instr) { return instr.op == Op::kWildcard; });
  for (size_t path_idx = 0; path_idx < impl_->paths.size(); ++path_idx) {
    const PathProgram& existing = *impl_->paths[path_idx];
    if (existing.text == path && existing.capture == capture) return static_cast<int>(path_idx);
  }
  auto program = std::make_unique<PathProgram>();
  program->text = std::string(path);
  program->tuple_field = tuple_field;
  if (tuple_field) program->tuple_key = std::string(path.substr(kTupleFieldPrefix.size()));
  program->instrs = std::move(instrs);
  program->capture = capture;
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
  std::vector<std::string_view> key_names;
  std::vector<PathProgram*> general;
  for (const std::unique_ptr<PathProgram>& program : impl.paths) {
    if (!program->active) continue;
    program->results.Start(json_strings.length, program->capture);
    active.push_back(program.get());
    if (program->IsTopLevelKey()) {
      keys.push_back(program.get());
      key_names.push_back(program->instrs[1].name);
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
  if (scan_flat) impl.key_names.Build(key_names);
  for (int64_t row_idx = 0; row_idx < json_strings.length; ++row_idx) {
    if ((rows != nullptr && !columnar::GetBit(rows, row_idx)) || json_strings.IsNull(row_idx)) {
      for (PathProgram* program : active) program->AppendResult(false, program->levels[0].buffer);
      continue;
    }
    const std::string_view text = json_strings.StringValue(row_idx);
    if (scan_flat && impl.scanner.Scan(text)) {
      AppendFlatKeys(impl.scanner.members(), keys, &impl.key_names);
      continue;
    }
    dom::element root;
    if (impl.reader.Parse(text, &root) != internal::ParseOutcome::kValue) {
      for (PathProgram* program : active) program->AppendResult(false, program->levels[0].buffer);
      continue;
    }
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
            if (key_state[key_idx] != 0 || member.key != key_names[key_idx]) continue;
            const bool written =
                keys[key_idx]->Eval(member.value, 2, Style::kRaw, 0) && !keys[key_idx]->raw_failed;
            key_state[key_idx] = written ? 1 : 2;
            --pending;
          }
          if (pending == 0) break;
        }
      }
      for (size_t key_idx = 0; key_idx < keys.size(); ++key_idx) {
        keys[key_idx]->AppendResult(key_state[key_idx] == 1, keys[key_idx]->levels[0].buffer);
      }
    }
    for (PathProgram* program : general) {
      start_row(program);
      PathProgram::Level& top = program->levels[0];
      const bool matched = (program->tuple_field ? program->EvalTupleField(root)
                                                 : program->Eval(root, 0, Style::kRaw, 0)) &&
                           !program->raw_failed;
      program->AppendResult(matched, top.buffer);
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
          program->capture ? CapturedType() : columnar::DataType::String(), json_strings.length);
    }
    out.push_back(program->inactive_nulls);
  }
  return out;
}

}  // namespace silt::json
