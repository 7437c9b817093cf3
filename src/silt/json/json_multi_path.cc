// JsonMultiPathEvaluator: Spark's get_json_object (JsonPathParser and
// GetJsonObject evaluatePath, Hive-compatible) over simdjson's DOM, many
// compiled paths over one parsed document. JsonPathEvaluator is its one-path use.

#include "silt/json/json_multi_path.h"

#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "silt/columnar/column.h"
#include "silt/json/dom_internal.h"
#include "silt/json/flat_object_internal.h"
#include "silt/json/json_path_internal.h"

namespace silt::json {

namespace {

namespace dom = simdjson::dom;
using columnar::BitmapBytes;
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

// The number of set bits of a zero-padded bitmap of `bits` bits.
int64_t CountSetBits(const uint8_t* bitmap, int64_t bits) {
  const int64_t bytes = BitmapBytes(bits);
  int64_t count = 0;
  int64_t byte = 0;
  for (; byte + 8 <= bytes; byte += 8) {
    uint64_t word;
    std::memcpy(&word, bitmap + byte, sizeof(word));
    count += std::popcount(word);
  }
  for (; byte < bytes; ++byte) count += std::popcount(static_cast<unsigned>(bitmap[byte]));
  return count;
}

// ---- The cast of a captured scalar (CaptureCast): Spark's CAST of the text
// get_json_object prints for it (AppendCapturedText), computed from the
// number itself when the result is certain without the text.

// Java's Double.toString prints magnitudes in [1e-3, 1e7) without an
// exponent (JsonGen::Double); only those texts parse as integers.
bool PrintsPlain(double d) {
  const double magnitude = std::fabs(d);
  return magnitude >= 1e-3 && magnitude < 1e7;
}

// CAST(text AS Out) for the text of (kind, bits): true with *out when that
// is certain without the text; false when only the text decides (the
// caller casts the text, so values, NULLs and ANSI errors stay the text
// cast's).
template <typename Out>
bool CastCaptured(CapturedKind kind, int64_t bits, bool ansi, Out* out) {
  if (kind == CapturedKind::kUint64) {
    const uint64_t u = std::bit_cast<uint64_t>(bits);
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      if constexpr (std::is_floating_point_v<Out>) {
        *out = static_cast<Out>(u);  // one correctly rounded conversion, as strtod/strtof
        return true;
      }
      return false;
    }
    kind = CapturedKind::kInt64;
  }
  if constexpr (std::is_same_v<Out, bool>) {
    if (kind == CapturedKind::kBool || (kind == CapturedKind::kInt64 && (bits == 0 || bits == 1))) {
      *out = bits != 0;  // "true"/"false"/"1"/"0"
      return true;
    }
    return false;
  } else {
    switch (kind) {
      case CapturedKind::kInt64:
        if constexpr (std::is_floating_point_v<Out>) {
          *out = static_cast<Out>(bits);
          return true;
        } else {
          if (bits < std::numeric_limits<Out>::min() || bits > std::numeric_limits<Out>::max()) {
            return false;
          }
          *out = static_cast<Out>(bits);
          return true;
        }
      case CapturedKind::kDouble: {
        const double d = std::bit_cast<double>(bits);
        if constexpr (std::is_same_v<Out, double>) {
          // Double.toString round-trips.
          *out = d;
          return true;
        } else if constexpr (std::is_same_v<Out, float>) {
          // The text is within half a double ulp of d, so strtof(text) and
          // (float)d agree unless d lies exactly on a rounding boundary
          // between two floats (or beyond the largest float).
          if (!(std::fabs(d) <= static_cast<double>(std::numeric_limits<float>::max()))) {
            return false;
          }
          const float f = static_cast<float>(d);
          if (static_cast<double>(f) != d) {
            const float next = std::nextafter(f, d > static_cast<double>(f)
                                                     ? std::numeric_limits<float>::infinity()
                                                     : -std::numeric_limits<float>::infinity());
            if ((static_cast<double>(f) + static_cast<double>(next)) / 2 == d) return false;
          }
          *out = f;
          return true;
        } else {
          // Non-ANSI reads "21.5" as 21 (UTF8String.toInt); ANSI rejects
          // the fraction, and no integer type reads an exponent.
          if (ansi) return false;
          if (d == 0) {
            *out = 0;
            return true;
          }
          if (!PrintsPlain(d)) return false;
          const double whole = std::trunc(d);  // |whole| < 1e7: exact
          if (whole < static_cast<double>(std::numeric_limits<Out>::min()) ||
              whole > static_cast<double>(std::numeric_limits<Out>::max())) {
            return false;
          }
          *out = static_cast<Out>(whole);
          return true;
        }
      }
      default: return false;
    }
  }
}

// The result columns of one path over one input column, written in place:
// Start() sizes the offsets, values and validity buffers for the whole
// batch, zero-filled, so a row without a result (NULL) costs nothing: rows
// are written by index, in increasing order, each at most once, and
// Finish() carries the text offsets over the rows without text and counts
// the nulls. A capturing path's `kind` and `bits` children are valid on the
// same rows and share one validity buffer.
class ResultWriter {
 public:
  // `cast` (with `capture`): captured scalars are written cast (AddPath).
  void Start(int64_t rows, bool capture, CaptureCast cast, bool ansi) {
    rows_ = rows;
    capture_ = capture;
    cast_ = capture ? cast : CaptureCast::kNone;
    ansi_ = ansi;
    offsets_ = nullptr;
    // A capturing path's rows are mostly numbers: its text buffers are
    // made on its first text row.
    if (!capture) StartText();
    if (cast_ != CaptureCast::kNone) {
      captured_validity_ = NewZeroed(BitmapBytes(rows));
      captured_valid_ = captured_validity_->mutable_data();
      const int64_t width = CastWidth(cast_);
      cast_values_ = NewZeroed(width == 0 ? BitmapBytes(rows) : rows * width);
      cast_data_ = cast_values_->mutable_data();
    } else if (capture) {
      captured_validity_ = NewZeroed(BitmapBytes(rows));
      kinds_ = NewZeroed(rows);
      bits_ = NewZeroed(rows * static_cast<int64_t>(sizeof(int64_t)));
      captured_valid_ = captured_validity_->mutable_data();
      kind_values_ = kinds_->mutable_data_as<int8_t>();
      bit_values_ = bits_->mutable_data_as<int64_t>();
    }
  }

  void Text(int64_t row, std::string_view text) {
    if (offsets_ == nullptr) StartText();
    text_data_->Append(text.data(), static_cast<int64_t>(text.size()));
    offsets_[row + 1] = static_cast<int32_t>(text_data_->size());
    columnar::SetBit(text_valid_, row);
  }
  // REQUIRES: Start(rows, capture = true).
  void Captured(int64_t row, int8_t kind, int64_t bits) {
    if (cast_ != CaptureCast::kNone) {
      CastRow(row, static_cast<CapturedKind>(kind), bits);
      return;
    }
    kind_values_[row] = kind;
    bit_values_[row] = bits;
    columnar::SetBit(captured_valid_, row);
  }

  ColumnPtr Finish() {
    ColumnPtr text;
    if (offsets_ != nullptr) {
      text = FinishText();
    } else {
      // No text row: one all-NULL column while batches keep their length
      // (columns are immutable).
      if (null_text_ == nullptr || null_text_->length != rows_) {
        null_text_ = columnar::MakeNullColumn(columnar::DataType::String(), rows_);
      }
      text = null_text_;
    }
    if (!capture_) return text;
    if (cast_ != CaptureCast::kNone) return FinishCast(std::move(text));
    auto column = std::make_shared<columnar::Column>();
    column->type = CapturedType();
    column->length = rows_;
    column->children.push_back(std::move(text));
    const int64_t captured_nulls = rows_ - CountSetBits(captured_valid_, rows_);
    for (int child = 0; child < 2; ++child) {
      auto scalar = std::make_shared<columnar::Column>();
      scalar->type = child == 0 ? columnar::DataType::Byte() : columnar::DataType::Long();
      scalar->length = rows_;
      scalar->null_count = captured_nulls;
      if (scalar->null_count > 0) scalar->validity = captured_validity_;
      scalar->values = child == 0 ? std::move(kinds_) : std::move(bits_);
      column->children.push_back(std::move(scalar));
    }
    captured_validity_ = nullptr;
    return column;
  }

  // A flat member's number or boolean: the common conversions (an integer
  // that fits, a double to DOUBLE, a boolean or 0/1 to BOOLEAN) directly,
  // the others through Captured(). REQUIRES: Start(rows, capture = true,
  // a cast); `member` not a string or null.
  void CastFlat(int64_t row, const internal::FlatMember& member) {
    using internal::FlatKind;
    switch (cast_) {
      case CaptureCast::kInt:
        if (member.kind == FlatKind::kInt64 &&
            member.int_value >= std::numeric_limits<int32_t>::min() &&
            member.int_value <= std::numeric_limits<int32_t>::max()) {
          return Store(row, static_cast<int32_t>(member.int_value));
        }
        break;
      case CaptureCast::kLong:
        if (member.kind == FlatKind::kInt64) return Store(row, member.int_value);
        break;
      case CaptureCast::kDouble:
        if (member.kind == FlatKind::kDouble) return Store(row, member.double_value);
        if (member.kind == FlatKind::kInt64) {
          return Store(row, static_cast<double>(member.int_value));
        }
        break;
      case CaptureCast::kBoolean:
        if (member.kind == FlatKind::kTrue ||
            (member.kind == FlatKind::kInt64 && member.int_value == 1)) {
          columnar::SetBit(cast_data_, row);
          columnar::SetBit(captured_valid_, row);
          return;
        }
        if (member.kind == FlatKind::kFalse ||
            (member.kind == FlatKind::kInt64 && member.int_value == 0)) {
          columnar::SetBit(captured_valid_, row);
          return;
        }
        break;
      default: break;
    }
    switch (member.kind) {
      case internal::FlatKind::kInt64: CastRow(row, CapturedKind::kInt64, member.int_value); return;
      case internal::FlatKind::kDouble:
        CastRow(row, CapturedKind::kDouble, std::bit_cast<int64_t>(member.double_value));
        return;
      default:
        CastRow(row, CapturedKind::kBool, member.kind == internal::FlatKind::kTrue ? 1 : 0);
        return;
    }
  }

 private:
  template <typename Out>
  void Store(int64_t row, Out value) {
    std::memcpy(cast_data_ + row * static_cast<int64_t>(sizeof(Out)), &value, sizeof(Out));
    columnar::SetBit(captured_valid_, row);
  }

  // Bytes per value of a cast's type; 0 for BOOLEAN (a bitmap).
  static int64_t CastWidth(CaptureCast cast) {
    switch (cast) {
      case CaptureCast::kByte: return 1;
      case CaptureCast::kShort: return 2;
      case CaptureCast::kInt:
      case CaptureCast::kFloat: return 4;
      case CaptureCast::kLong:
      case CaptureCast::kDouble: return 8;
      default: return 0;
    }
  }

  void CastRow(int64_t row, CapturedKind kind, int64_t bits) {
    switch (cast_) {
      case CaptureCast::kBoolean: {
        bool value = false;
        if (CastCaptured<bool>(kind, bits, ansi_, &value)) {
          if (value) columnar::SetBit(cast_data_, row);
          columnar::SetBit(captured_valid_, row);
          return;
        }
        break;
      }
      case CaptureCast::kByte:
        if (CastInto<int8_t>(row, kind, bits)) return;
        break;
      case CaptureCast::kShort:
        if (CastInto<int16_t>(row, kind, bits)) return;
        break;
      case CaptureCast::kInt:
        if (CastInto<int32_t>(row, kind, bits)) return;
        break;
      case CaptureCast::kLong:
        if (CastInto<int64_t>(row, kind, bits)) return;
        break;
      case CaptureCast::kFloat:
        if (CastInto<float>(row, kind, bits)) return;
        break;
      case CaptureCast::kDouble:
        if (CastInto<double>(row, kind, bits)) return;
        break;
      case CaptureCast::kNone: break;
    }
    // Only the text decides: the caller casts it.
    cast_scratch_.clear();
    AppendCapturedText(kind, bits, &cast_scratch_);
    Text(row, cast_scratch_);
  }

  template <typename Out>
  bool CastInto(int64_t row, CapturedKind kind, int64_t bits) {
    Out value;
    if (!CastCaptured<Out>(kind, bits, ansi_, &value)) return false;
    Store(row, value);
    return true;
  }

  ColumnPtr FinishCast(ColumnPtr text) {
    const columnar::TypePtr& type = CapturedCastType(cast_);
    auto value = std::make_shared<columnar::Column>();
    value->type = type->fields()[1].type;
    value->length = rows_;
    value->null_count = rows_ - CountSetBits(captured_valid_, rows_);
    if (value->null_count > 0) value->validity = std::move(captured_validity_);
    value->values = std::move(cast_values_);
    captured_validity_ = nullptr;
    cast_values_ = nullptr;
    auto column = std::make_shared<columnar::Column>();
    column->type = type;
    column->length = rows_;
    column->children.push_back(std::move(text));
    column->children.push_back(std::move(value));
    return column;
  }

  static BufferPtr NewZeroed(int64_t size) {
    auto buffer = std::make_shared<Buffer>();
    buffer->Resize(size);
    return buffer;
  }

  void StartText() {
    text_validity_ = NewZeroed(BitmapBytes(rows_));
    text_offsets_ = NewZeroed((rows_ + 1) * static_cast<int64_t>(sizeof(int32_t)));
    text_data_ = std::make_shared<Buffer>();
    if (data_reserve_ > 0) text_data_->Reserve(data_reserve_);
    text_valid_ = text_validity_->mutable_data();
    offsets_ = text_offsets_->mutable_data_as<int32_t>();
  }

  ColumnPtr FinishText() {
    // A row without text ends where the previous row ended (its slot is
    // still zero; texts were appended in row order).
    int32_t end = 0;
    for (int64_t row = 1; row <= rows_; ++row) {
      end = std::max(end, offsets_[row]);
      offsets_[row] = end;
    }
    data_reserve_ = text_data_->size();
    auto text = std::make_shared<columnar::Column>();
    text->type = columnar::DataType::String();
    text->length = rows_;
    text->null_count = rows_ - CountSetBits(text_valid_, rows_);
    if (text->null_count > 0) text->validity = std::move(text_validity_);
    text->values = std::move(text_offsets_);
    text->data = std::move(text_data_);
    text_validity_ = nullptr;
    offsets_ = nullptr;
    return text;
  }

  int64_t rows_ = 0;
  bool capture_ = false;
  CaptureCast cast_ = CaptureCast::kNone;
  bool ansi_ = false;
  uint8_t* cast_data_ = nullptr;
  BufferPtr cast_values_;
  std::string cast_scratch_;
  // The previous batch's text bytes: the next batch's first reservation.
  int64_t data_reserve_ = 0;
  // The buffers' bytes, written per row; offsets_ is null until the
  // batch's text buffers exist.
  uint8_t* text_valid_ = nullptr;
  int32_t* offsets_ = nullptr;
  uint8_t* captured_valid_ = nullptr;
  int8_t* kind_values_ = nullptr;
  int64_t* bit_values_ = nullptr;
  BufferPtr text_validity_;
  BufferPtr text_offsets_;
  BufferPtr text_data_;
  BufferPtr captured_validity_;
  BufferPtr kinds_;
  BufferPtr bits_;
  ColumnPtr null_text_;
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

namespace {

// The `$.name` paths of a batch over the rows the scanner reads: each
// member's key finds its distinct name through one probe of a small
// open-addressing table whose slots hold a name's length and its first and
// last (overlapping) words, which together are the whole name when it has
// at most 16 bytes, so a probe compares three integers and no bytes. The
// first non-null member of each name decides, as in the DOM loop (a row
// stamp per name, so nothing is reset per row), and goes straight to the
// result writers of the paths that read that name; a path whose name the
// row lacks writes nothing (NULL).
class KeyNames {
 public:
  // `keys`: the active `$.name` paths, names repeated allowed (`$.a` and
  // `$['a']`, or one path captured and one not).
  void Build(const std::vector<PathProgram*>& keys) {
    distinct_.clear();
    std::vector<int> name_of_path;
    for (PathProgram* program : keys) {
      const std::string_view name = program->instrs[1].name;
      const auto found = std::find(distinct_.begin(), distinct_.end(), name);
      name_of_path.push_back(static_cast<int>(found - distinct_.begin()));
      if (found == distinct_.end()) distinct_.push_back(name);
    }
    size_t slots = 16;
    while (slots < distinct_.size() * 2) slots *= 2;
    slots_.assign(slots, Slot{});
    mask_ = slots - 1;
    readers_.clear();
    for (size_t name_idx = 0; name_idx < distinct_.size(); ++name_idx) {
      const std::string_view name = distinct_[name_idx];
      // Each name's paths, contiguous.
      Slot key;
      key.first_reader = static_cast<int32_t>(readers_.size());
      for (size_t key_idx = 0; key_idx < keys.size(); ++key_idx) {
        if (name_of_path[key_idx] == static_cast<int>(name_idx)) readers_.push_back(keys[key_idx]);
      }
      key.end_reader = static_cast<int32_t>(readers_.size());
      // An empty name is never matched by the scanner's rows (as before
      // the table): it stays out of it.
      if (name.empty()) continue;
      key.size = name.size();
      Words(name, &key.head, &key.tail);
      key.name = static_cast<int32_t>(name_idx);
      size_t slot = Hash(key.head, key.tail, name.size()) & mask_;
      while (slots_[slot].name >= 0) slot = (slot + 1) & mask_;
      slots_[slot] = key;
    }
  }

  // Writes the results of row `row`, whose members the scanner read.
  void WriteRow(int64_t row, const std::vector<internal::FlatMember>& members) {
    // Locals: the result writes store bytes, which would otherwise make the
    // compiler reload these members after each one.
    Slot* const slots = slots_.data();
    const size_t mask = mask_;
    PathProgram* const* const readers = readers_.data();
    for (const internal::FlatMember& member : members) {
      if (member.kind == internal::FlatKind::kNull) continue;
      Slot* slot = Find(slots, mask, member.key);
      if (slot == nullptr || slot->seen == row) continue;  // not wanted, or found before
      slot->seen = row;
      for (int32_t reader = slot->first_reader; reader < slot->end_reader; ++reader) {
        Write(row, member, readers[reader]);
      }
    }
  }

 private:
  struct Slot {
    uint64_t head = 0;
    uint64_t tail = 0;
    size_t size = 0;
    int32_t name = -1;  // index in distinct_; -1: an empty slot
    // The paths reading the name: readers_[first_reader, end_reader).
    int32_t first_reader = 0;
    int32_t end_reader = 0;
    // The last row in which the name was found (rows of one batch).
    int64_t seen = -1;
  };

  // The first and last words of `key` (4 or 8 bytes, overlapping; the bytes
  // themselves below 4), never reading outside it.
  static void Words(std::string_view key, uint64_t* head, uint64_t* tail) {
    const size_t n = key.size();
    const char* p = key.data();
    if (n >= 8) {
      std::memcpy(head, p, 8);
      std::memcpy(tail, p + n - 8, 8);
    } else if (n >= 4) {
      uint32_t a;
      uint32_t b;
      std::memcpy(&a, p, 4);
      std::memcpy(&b, p + n - 4, 4);
      *head = a;
      *tail = b;
    } else {
      uint64_t bytes = 0;
      for (size_t i = 0; i < n; ++i) {
        bytes |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
      }
      *head = bytes;
      *tail = 0;
    }
  }
  static size_t Hash(uint64_t head, uint64_t tail, size_t size) {
    return static_cast<size_t>(
        ((head ^ (tail * 0x9E3779B97F4A7C15ULL) ^ size) * 0xFF51AFD7ED558CCDULL) >> 40);
  }

  // The slot of the wanted name equal to `key`, or null.
  Slot* Find(Slot* slots, size_t mask, std::string_view key) const {
    if (key.empty()) return nullptr;
    uint64_t head;
    uint64_t tail;
    Words(key, &head, &tail);
    for (size_t slot = Hash(head, tail, key.size()) & mask;; slot = (slot + 1) & mask) {
      Slot& entry = slots[slot];
      if (entry.name < 0) return nullptr;
      if (entry.head == head && entry.tail == tail && entry.size == key.size() &&
          (key.size() <= 16 || std::memcmp(distinct_[static_cast<size_t>(entry.name)].data(),
                                           key.data(), key.size()) == 0)) {
        return &entry;
      }
    }
  }

  // One path's result for the first non-null member of its name: strings
  // unquoted, numbers and booleans captured or re-printed.
  static void Write(int64_t row, const internal::FlatMember& member, PathProgram* program) {
    ResultWriter& results = program->results;
    if (member.kind == internal::FlatKind::kString) {
      results.Text(row, member.text);
      return;
    }
    if (program->cast != CaptureCast::kNone) {
      results.CastFlat(row, member);
      return;
    }
    CapturedKind kind = CapturedKind::kBool;
    int64_t bits = 0;
    switch (member.kind) {
      case internal::FlatKind::kInt64:
        kind = CapturedKind::kInt64;
        bits = member.int_value;
        break;
      case internal::FlatKind::kDouble:
        kind = CapturedKind::kDouble;
        bits = std::bit_cast<int64_t>(member.double_value);
        break;
      case internal::FlatKind::kTrue: bits = 1; break;
      default: break;  // kFalse (kNull and kString never get here)
    }
    if (program->capture) {
      results.Captured(row, static_cast<int8_t>(kind), bits);
    } else {
      std::string& text = program->levels[0].buffer;
      text.clear();
      AppendCapturedText(kind, bits, &text);
      results.Text(row, text);
    }
  }

  std::vector<std::string_view> distinct_;
  std::vector<PathProgram*> readers_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

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

const columnar::TypePtr& CapturedCastType(CaptureCast cast) {
  static const std::vector<columnar::TypePtr> types = [] {
    const columnar::TypePtr values[] = {columnar::DataType::Boolean(), columnar::DataType::Byte(),
                                        columnar::DataType::Short(),   columnar::DataType::Int(),
                                        columnar::DataType::Long(),    columnar::DataType::Float(),
                                        columnar::DataType::Double()};
    std::vector<columnar::TypePtr> out;
    for (const columnar::TypePtr& value : values) {
      out.push_back(columnar::DataType::Struct({
          columnar::Field{"text", columnar::DataType::String(), true},
          columnar::Field{"value", value, true},
      }));
    }
    return out;
  }();
  return types[static_cast<size_t>(cast) - 1];
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
  if (scan_flat) impl.key_names.Build(keys);
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
