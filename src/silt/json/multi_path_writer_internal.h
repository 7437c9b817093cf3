// The output side of JsonMultiPathEvaluator (json_multi_path.h):
//   ResultWriter  one path's result columns over one input column, written
//                 in place row by row (text, captured scalars, or a fused
//                 cast's values);
//   KeyNames      the `$.name` paths of a batch whose rows the flat scanner
//                 reads: each member's key finds the writers of the paths
//                 that read its name through one small hash probe.
//
// Internal to json. Thread safety: one per evaluator (one thread).
// Ownership: a writer owns its buffers until Finish() hands them to the
// returned column; KeyNames borrows the writers and names given to Build()
// until the next Build().
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/buffer.h"
#include "silt/columnar/column.h"
#include "silt/json/capture_cast.h"
#include "silt/json/flat_object_internal.h"

namespace silt::json::internal {

// The result columns of one path over one input column, written in place:
// Start() sizes the offsets, values and validity buffers for the whole
// batch, zero-filled, so a row without a result (NULL) costs nothing: rows
// are written by index, in increasing order, each at most once, and
// Finish() carries the text offsets over the rows without text and counts
// the nulls. A capturing path's `kind` and `bits` children are valid on the
// same rows and share one validity buffer.
//
// The per-row writes are inline: the evaluator and KeyNames call them in
// their row loops.
class ResultWriter {
 public:
  // Starts a batch of `rows` rows. With `capture`, numbers and booleans are
  // captured (CapturedType()), and with a `cast` other than kNone written
  // cast (CapturedCastType(cast), ANSI when `ansi`; AddPath).
  void Start(int64_t rows, bool capture, CaptureCast cast, bool ansi);

  // Row `row`'s result is `text`.
  void Text(int64_t row, std::string_view text) {
    if (offsets_ == nullptr) StartText();
    text_data_->Append(text.data(), static_cast<int64_t>(text.size()));
    offsets_[row + 1] = static_cast<int32_t>(text_data_->size());
    columnar::SetBit(text_valid_, row);
  }
  // Row `row`'s result is the captured scalar (kind, bits).
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
  // Row `row`'s result is a flat row's member (the first non-null member of
  // the path's name): a string unquoted, a number or boolean captured (and
  // cast) when capturing, else re-printed (AppendCapturedText).
  // REQUIRES: `member` is not JSON null.
  void Flat(int64_t row, const FlatMember& member) {
    if (member.kind == FlatKind::kString) {
      Text(row, member.text);
      return;
    }
    if (cast_ != CaptureCast::kNone) {
      CastFlat(row, member);
      return;
    }
    CapturedKind kind = CapturedKind::kBool;
    int64_t bits = 0;
    switch (member.kind) {
      case FlatKind::kInt64:
        kind = CapturedKind::kInt64;
        bits = member.int_value;
        break;
      case FlatKind::kDouble:
        kind = CapturedKind::kDouble;
        bits = std::bit_cast<int64_t>(member.double_value);
        break;
      case FlatKind::kTrue: bits = 1; break;
      default: break;  // kFalse (kNull and kString never get here)
    }
    if (capture_) {
      Captured(row, static_cast<int8_t>(kind), bits);
    } else {
      scratch_.clear();
      AppendCapturedText(kind, bits, &scratch_);
      Text(row, scratch_);
    }
  }

  // The batch's result column: STRING, or CapturedType() /
  // CapturedCastType(cast) as Start() said, of `rows` rows.
  columnar::ColumnPtr Finish();

 private:
  // A flat member's number or boolean: the common conversions (an integer
  // that fits, a double to DOUBLE, a boolean or 0/1 to BOOLEAN) directly,
  // the others through CastRow(). REQUIRES: a cast; `member` not a string
  // or null.
  void CastFlat(int64_t row, const FlatMember& member) {
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
      case FlatKind::kInt64: CastRow(row, CapturedKind::kInt64, member.int_value); return;
      case FlatKind::kDouble:
        CastRow(row, CapturedKind::kDouble, std::bit_cast<int64_t>(member.double_value));
        return;
      default: CastRow(row, CapturedKind::kBool, member.kind == FlatKind::kTrue ? 1 : 0); return;
    }
  }

  template <typename Out>
  void Store(int64_t row, Out value) {
    std::memcpy(cast_data_ + row * static_cast<int64_t>(sizeof(Out)), &value, sizeof(Out));
    columnar::SetBit(captured_valid_, row);
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
    scratch_.clear();
    AppendCapturedText(kind, bits, &scratch_);
    Text(row, scratch_);
  }

  template <typename Out>
  bool CastInto(int64_t row, CapturedKind kind, int64_t bits) {
    Out value;
    if (!CastCaptured<Out>(kind, bits, ansi_, &value)) return false;
    Store(row, value);
    return true;
  }

  columnar::ColumnPtr FinishCast(columnar::ColumnPtr text);
  void StartText();
  columnar::ColumnPtr FinishText();

  int64_t rows_ = 0;
  bool capture_ = false;
  CaptureCast cast_ = CaptureCast::kNone;
  bool ansi_ = false;
  uint8_t* cast_data_ = nullptr;
  BufferPtr cast_values_;
  // A captured scalar's text on its way to Text().
  std::string scratch_;
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
  columnar::ColumnPtr null_text_;
};

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
  // One `$.name` path: its name and its result writer.
  struct KeyPath {
    std::string_view name;
    ResultWriter* results;
  };

  // `keys`: the active `$.name` paths, names repeated allowed (`$.a` and
  // `$['a']`, or one path captured and one not). REQUIRES: the names' bytes
  // and the writers outlive the WriteRow() calls until the next Build().
  void Build(const std::vector<KeyPath>& keys);

  // Writes the results of row `row`, whose members the scanner read.
  void WriteRow(int64_t row, const std::vector<FlatMember>& members);

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

  // Words, Hash and Find are defined in the class (implicitly inline): out
  // of line, WriteRow calls Find per member (+1.6 % of workload A's
  // instructions, callgrind).

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

  std::vector<std::string_view> distinct_;
  std::vector<ResultWriter*> readers_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

}  // namespace silt::json::internal
