// Executor templates for element-wise kernels (internal to expr): one call
// per batch runs an op over every row of one or two arguments and builds the
// output column, so a kernel states what happens to one value and nothing
// about loops, constants or validity. Arrow's ScalarUnary and DuckDB's
// UnaryExecutor / BinaryExecutor are the models.
//
//   UnaryExecutor<In, Out>::Execute(info, args, op)          op(a) -> Out
//   UnaryExecutor<In, Out>::ExecuteChecked(info, args, op)   op(a, ctx) -> Out
//   BinaryExecutor<A, B, Out>::Execute(info, args, op)       op(a, b) -> Out
//   BinaryExecutor<A, B, Out>::ExecuteChecked(info, args, op) op(a, b, ctx) -> Out
//
// Value types name the physical layout of an argument or the output: a
// fixed-width C++ type (int8_t ... int64_t, int128, float, double: a values
// array), `bool` (bit-packed values) or `std::string_view` (STRING/BINARY:
// int32 offsets + bytes). A string-output op does not return its value: it
// writes it through a StringAppender passed after the arguments,
// `op(a, out)` / `op(a, out, ctx)`; every byte goes into one data buffer of
// the output, the offsets are allocated once per batch.
//
// Contract:
// - NULL in, NULL out: the output validity is the AND of the arguments'
//   validity, a byte at a time; a NULL constant argument makes every row
//   NULL and the op never runs.
// - Execute (the op cannot fail or make NULLs): for fixed-width and bool
//   outputs the op also runs on NULL rows (whatever value sits under the
//   NULL; the result there is hidden by the validity), so the loop has no
//   branch and vectorizes; the op must therefore be total (no UB, no
//   side effects) for every input value. For string outputs it runs on
//   valid rows only.
// - ExecuteChecked: the op runs on valid rows only (validity read a 64-bit
//   word at a time: all-valid words run without tests, all-null words are
//   skipped) and may call ctx.SetNull() (the row is NULL) or ctx.Fail(status)
//   (the batch stops and the executor returns that status; ctx.row() names
//   the row, as the kernels' ANSI messages do). What the op returns after
//   SetNull or Fail is ignored; bytes a string op appended are dropped.
// - Fast paths: no validity tests when every argument is valid; a constant
//   argument is read once, outside the loop; when every argument is constant
//   the op runs once and its value fills the output.
// - NULL rows hold zero (fixed-width, bool) or an empty string in the
//   output, except where the op ran on them under Execute.
// - The op is a template argument (a lambda or functor), inlined: no virtual
//   call, std::function or allocation per row.
//
// Thread safety: plain functions over their arguments; one batch per call.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

#include "silt/base/buffer.h"
#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/expr/kernel/bound.h"
#include "silt/expr/kernel/kernel_util.h"

namespace silt::expr {

template <typename Out>
class ExecutorOutput;
struct ExecutorLoops;

// An argument: a column of the batch's length, or a constant (one row
// standing for every row). Converts from a Datum, or from a column that is
// not constant.
struct ExecutorArg {
  ExecutorArg(const Datum& d) : column(d.column.get()), constant(d.constant) {}  // NOLINT
  ExecutorArg(const columnar::Column& c) : column(&c), constant(false) {}        // NOLINT
  const columnar::Column* column;
  bool constant;
};

// What a checked op sees of its row.
class RowContext {
 public:
  // The row being computed (0-based within the batch), for error messages.
  int64_t row() const { return row_; }
  // This row's output is NULL.
  void SetNull() { state_ = State::kNull; }
  // Stops the batch: the executor returns `status` (not OK).
  void Fail(Status status) {
    *status_ = std::move(status);
    state_ = State::kFailed;
  }
  // Fail(make_error()) when `fail` (ANSI mode), else SetNull(): the status
  // is only built for the failing row.
  template <typename MakeError>
  void FailOrNull(bool fail, MakeError&& make_error) {
    if (fail) {
      Fail(make_error());
    } else {
      SetNull();
    }
  }

 private:
  friend struct ExecutorLoops;
  enum class State : uint8_t { kValue, kNull, kFailed };
  // The status lives outside, so a context whose methods inline stays in
  // registers.
  explicit RowContext(Status* status) : status_(status) {}
  int64_t row_ = 0;
  State state_ = State::kValue;
  Status* status_;
};

// Appends one row's string value to the output's data buffer. It keeps the
// write position and capacity itself (the executor's loop holds it as a
// local), growing the buffer geometrically.
class StringAppender {
 public:
  void Append(std::string_view s) {
    const int64_t n = static_cast<int64_t>(s.size());
    if (size_ + n > capacity_) Grow(n);
    if (n > 0) std::memcpy(data_ + size_, s.data(), static_cast<size_t>(n));
    size_ += n;
  }
  void Push(char c) {
    if (size_ + 1 > capacity_) Grow(1);
    data_[size_++] = c;
  }
  // Grows the value by `n` bytes and returns them for the op to fill.
  char* Extend(int64_t n) {
    if (size_ + n > capacity_) Grow(n);
    char* at = data_ + size_;
    size_ += n;
    return at;
  }

 private:
  friend class ExecutorOutput<std::string_view>;
  friend struct ExecutorLoops;
  StringAppender(Buffer* buffer, int64_t capacity) : buffer_(buffer) {
    if (capacity > 0) Grow(capacity);
  }
  // The buffer's size is its capacity while the batch runs (Resize zeroes
  // the new bytes once); Finish shrinks it to what was written.
  void Grow(int64_t n) {
    int64_t want = std::max<int64_t>({capacity_ * 2, size_ + n, 256});
    buffer_->Resize(want);
    data_ = reinterpret_cast<char*>(buffer_->mutable_data());
    capacity_ = want;
  }
  void Finish() { buffer_->Resize(size_); }

  Buffer* buffer_;
  char* data_ = nullptr;
  int64_t size_ = 0;
  int64_t capacity_ = 0;
};

// Reads argument values of value type T from a column without a constant
// mask (the executor hoists constants itself).
template <typename T>
class ExecutorInput {
 public:
  explicit ExecutorInput(const columnar::Column& c)
      : values_(c.values != nullptr && c.values->size() > 0 ? c.values->data_as<T>() : kZero) {}
  T operator[](int64_t row) const { return values_[row]; }

 private:
  static constexpr T kZero[1] = {T()};
  const T* values_;
};

template <>
class ExecutorInput<bool> {
 public:
  explicit ExecutorInput(const columnar::Column& c)
      : bits_(c.values != nullptr && c.values->size() > 0 ? c.values->data() : kZero) {}
  bool operator[](int64_t row) const { return columnar::GetBit(bits_, row); }

 private:
  static constexpr uint8_t kZero[1] = {0};
  const uint8_t* bits_;
};

template <>
class ExecutorInput<std::string_view> {
 public:
  explicit ExecutorInput(const columnar::Column& c)
      : offsets_(c.values != nullptr && c.values->size() > 0 ? c.values->data_as<int32_t>()
                                                             : kZeroOffsets),
        data_(c.data != nullptr ? reinterpret_cast<const char*>(c.data->data()) : "") {}
  std::string_view operator[](int64_t row) const {
    return std::string_view(data_ + offsets_[row],
                            static_cast<size_t>(offsets_[row + 1] - offsets_[row]));
  }

 private:
  static constexpr int32_t kZeroOffsets[2] = {0, 0};
  const int32_t* offsets_;
  const char* data_;
};

// The output column being built, by value type.
template <typename Out>
class ExecutorOutput {
 public:
  explicit ExecutorOutput(int64_t n) : length_(n), writer_(n) {}
  template <typename F>
  void FillAll(int64_t n, F&& f) {
    Out* dst = writer_.data();
    for (int64_t row = 0; row < n; ++row) dst[row] = f(row);
  }
  void Set(int64_t row, Out v) { writer_.data()[row] = v; }
  // A raw view for the checked loop (a local pointer, so stores need not
  // reload it).
  struct Sink {
    Out* data;
    void Set(int64_t row, Out v) const { data[row] = v; }
  };
  Sink sink() { return Sink{writer_.data()}; }
  void Repeat(int64_t n, Out v) { std::fill(writer_.data(), writer_.data() + n, v); }
  void RepeatFirst() { Repeat(length_, writer_.data()[0]); }
  columnar::ColumnPtr Finish(const columnar::TypePtr& type, ValidityOut* validity) {
    return writer_.Finish(type, validity);
  }

 private:
  int64_t length_;
  FixedWriter<Out> writer_;
};

template <>
class ExecutorOutput<bool> {
 public:
  explicit ExecutorOutput(int64_t n) : length_(n), writer_(n) {}
  // Packs eight results into a byte rather than setting bits one by one.
  template <typename F>
  void FillAll(int64_t n, F&& f) {
    uint8_t* bits = writer_.bits();
    const int64_t full = n / 8;
    for (int64_t byte_idx = 0; byte_idx < full; ++byte_idx) {
      uint8_t byte = 0;
      for (int bit = 0; bit < 8; ++bit) {
        byte |= static_cast<uint8_t>(static_cast<uint8_t>(f(byte_idx * 8 + bit)) << bit);
      }
      bits[byte_idx] = byte;
    }
    for (int64_t row = full * 8; row < n; ++row) Set(row, f(row));
  }
  // REQUIRES: each row set at most once (the bits start cleared).
  void Set(int64_t row, bool v) {
    if (v) columnar::SetBit(writer_.bits(), row);
  }
  struct Sink {
    uint8_t* bits;
    void Set(int64_t row, bool v) const {
      if (v) columnar::SetBit(bits, row);
    }
  };
  Sink sink() { return Sink{writer_.bits()}; }
  void Repeat(int64_t n, bool v) {
    if (!v) return;
    for (int64_t row = 0; row < n; ++row) columnar::SetBit(writer_.bits(), row);
  }
  void RepeatFirst() { Repeat(length_, columnar::GetBit(writer_.bits(), 0)); }
  columnar::ColumnPtr Finish(const columnar::TypePtr& type, ValidityOut* validity) {
    return writer_.Finish(type, validity);
  }

 private:
  int64_t length_;
  BoolWriter writer_;
};

template <>
class ExecutorOutput<std::string_view> {
 public:
  // Offsets for `n` rows at once (all rows empty until written); the data
  // buffer grows geometrically from `data_hint` bytes.
  explicit ExecutorOutput(int64_t n, int64_t data_hint = 0)
      : length_(n),
        offsets_(std::make_shared<Buffer>()),
        data_(std::make_shared<Buffer>()),
        appender_(data_.get(), data_hint) {
    offsets_->Resize((n + 1) * static_cast<int64_t>(sizeof(int32_t)));
  }
  int32_t* offsets() { return offsets_->mutable_data_as<int32_t>(); }
  StringAppender& appender() { return appender_; }
  // Every row gets the bytes of row 0 (already written).
  void RepeatFirst() {
    int32_t* off = offsets();
    const std::string first(appender_.data_, static_cast<size_t>(off[1]));
    for (int64_t row = 1; row < length_; ++row) {
      appender_.Append(first);
      off[row + 1] = static_cast<int32_t>(appender_.size_);
    }
  }
  columnar::ColumnPtr Finish(const columnar::TypePtr& type, ValidityOut* validity) {
    appender_.Finish();
    auto col = std::make_shared<columnar::Column>();
    col->type = type;
    col->length = length_;
    col->values = offsets_;
    col->data = data_;
    validity->FinishInto(col.get());
    return col;
  }

 private:
  int64_t length_;
  BufferPtr offsets_;
  BufferPtr data_;
  StringAppender appender_;
};

// The row loops shared by the executors.
struct ExecutorLoops {
  // The `len` (<= 64) validity bits at `bits`, returned by value so the
  // loop's word stays in a register.
  [[gnu::always_inline]] static uint64_t LoadWord(const uint8_t* bits, int64_t len) {
    uint64_t word = 0;
    std::memcpy(&word, bits, static_cast<size_t>((len + 7) / 8));
    return len < 64 ? word & ((uint64_t{1} << len) - 1) : word;
  }

  // Runs `one(row)` for every valid row (all rows when `bits` is null), a
  // 64-bit validity word at a time. Stops at the first `one` returning false.
  // Always inlined into its caller, so the caller's row state (the
  // RowContext, output pointers) stays in registers.
  template <typename One>
  [[gnu::always_inline]] static bool ForEachValid(const uint8_t* bits, int64_t n, One&& one) {
    if (bits == nullptr) {
      for (int64_t row = 0; row < n; ++row) {
        if (!one(row)) return false;
      }
      return true;
    }
    for (int64_t base = 0; base < n; base += 64) {
      const int64_t len = std::min<int64_t>(64, n - base);
      uint64_t word = LoadWord(bits + base / 8, len);
      const uint64_t full = len == 64 ? ~uint64_t{0} : (uint64_t{1} << len) - 1;
      if (word == full) {
        for (int64_t row = base; row < base + len; ++row) {
          if (!one(row)) return false;
        }
      } else {
        while (word != 0) {
          const int64_t row = base + std::countr_zero(word);
          if (!one(row)) return false;
          word &= word - 1;
        }
      }
    }
    return true;
  }

  // A checked op over valid rows: `compute(row, ctx)` returns the row's
  // value; for a string output `compute(row, appender, ctx)` appends it.
  template <typename Out, typename Compute>
  static Status RunChecked(int64_t n, ValidityOut* validity, ExecutorOutput<Out>* out,
                           Compute&& compute) {
    if constexpr (std::is_same_v<Out, std::string_view>) {
      return RunString(n, validity, out, compute);
    } else {
      return RunFixed(n, validity, out, compute);
    }
  }

  // String output: the appender and offsets are locals of the loop; every
  // row's end offset is written (NULL rows: empty).
  template <typename Compute>
  static Status RunString(int64_t n, ValidityOut* validity, ExecutorOutput<std::string_view>* out,
                          Compute&& compute) {
    Status status;
    RowContext ctx(&status);
    StringAppender appender = out->appender();
    int32_t* offsets = out->offsets();
    const uint8_t* bits = validity->bits();
    bool ok = true;
    for (int64_t row = 0; row < n; ++row) {
      if (bits == nullptr || columnar::GetBit(bits, row)) {
        const int64_t start = appender.size_;
        ctx.row_ = row;
        compute(row, appender, ctx);
        if (ctx.state_ != RowContext::State::kValue) {
          appender.size_ = start;
          if (ctx.state_ == RowContext::State::kFailed) {
            ok = false;
            break;
          }
          validity->SetNull(row);
          ctx.state_ = RowContext::State::kValue;
        }
      }
      offsets[row + 1] = static_cast<int32_t>(appender.size_);
    }
    out->appender() = appender;
    if (!ok) return status;
    return Status::OK();
  }

  template <typename Out, typename Compute>
  static Status RunFixed(int64_t n, ValidityOut* validity, ExecutorOutput<Out>* out,
                         Compute&& compute) {
    Status status;
    RowContext ctx(&status);
    const uint8_t* bits = validity->bits();
    const auto sink = out->sink();
    auto one = [&](int64_t row) {
      ctx.row_ = row;
      {
        Out v = compute(row, ctx);
        if (ctx.state_ == RowContext::State::kValue) {
          sink.Set(row, v);
          return true;
        }
      }
      if (ctx.state_ == RowContext::State::kFailed) return false;
      validity->SetNull(row);
      ctx.state_ = RowContext::State::kValue;
      return true;
    };
    if (!ForEachValid(bits, n, one)) return status;
    return Status::OK();
  }
};

// Runs a checked op once, as row 0, and copies row 0 (value or NULL) to the
// other rows: every argument is constant.
template <typename Out, typename Compute>
Status ExecuteOnce(int64_t n, ValidityOut* validity, ExecutorOutput<Out>* out, Compute&& compute) {
  SILT_RETURN_NOT_OK(
      ExecutorLoops::RunChecked<Out>(std::min<int64_t>(n, 1), validity, out, compute));
  if (n <= 1) return Status::OK();
  if (!validity->IsValid(0)) {
    validity->SetAllNull();
  } else {
    out->RepeatFirst();
  }
  return Status::OK();
}

template <typename In, typename Out>
struct UnaryExecutor {
  template <typename Op>
  static Result<columnar::ColumnPtr> Execute(const KernelInfo& info, const ExecArgs& args,
                                             Op&& op) {
    return Execute(info.type, args.args[0], args.num_rows, op);
  }
  template <typename Op>
  static Result<columnar::ColumnPtr> ExecuteChecked(const KernelInfo& info, const ExecArgs& args,
                                                    Op&& op) {
    return ExecuteChecked(info.type, args.args[0], args.num_rows, op);
  }

  template <typename Op>
  static Result<columnar::ColumnPtr> Execute(const columnar::TypePtr& type, ExecutorArg a,
                                             int64_t n, Op&& op) {
    if constexpr (std::is_same_v<Out, std::string_view>) {
      return ExecuteChecked(type, a, n,
                            [&op](In x, StringAppender& out, RowContext&) { op(x, out); });
    } else {
      ValidityOut validity(n);
      ExecutorOutput<Out> out(n);
      if (!validity.AndArg(*a.column, a.constant)) return out.Finish(type, &validity);
      ExecutorInput<In> in(*a.column);
      if (a.constant) {
        out.Repeat(n, op(in[0]));
      } else {
        out.FillAll(n, [&op, in](int64_t row) { return op(in[row]); });
      }
      return out.Finish(type, &validity);
    }
  }

  template <typename Op>
  static Result<columnar::ColumnPtr> ExecuteChecked(const columnar::TypePtr& type, ExecutorArg a,
                                                    int64_t n, Op&& op) {
    ValidityOut validity(n);
    ExecutorOutput<Out> out(n);
    if (!validity.AndArg(*a.column, a.constant)) return out.Finish(type, &validity);
    ExecutorInput<In> in(*a.column);
    if (a.constant) {
      const In x = in[0];
      SILT_RETURN_NOT_OK(ExecuteOnce<Out>(
          n, &validity, &out, [&op, x](int64_t, auto&&... rest) { return op(x, rest...); }));
    } else {
      SILT_RETURN_NOT_OK(ExecutorLoops::RunChecked<Out>(
          n, &validity, &out,
          [&op, in](int64_t row, auto&&... rest) { return op(in[row], rest...); }));
    }
    return out.Finish(type, &validity);
  }
};

template <typename A, typename B, typename Out>
struct BinaryExecutor {
  template <typename Op>
  static Result<columnar::ColumnPtr> Execute(const KernelInfo& info, const ExecArgs& args,
                                             Op&& op) {
    return Execute(info.type, args.args[0], args.args[1], args.num_rows, op);
  }
  template <typename Op>
  static Result<columnar::ColumnPtr> ExecuteChecked(const KernelInfo& info, const ExecArgs& args,
                                                    Op&& op) {
    return ExecuteChecked(info.type, args.args[0], args.args[1], args.num_rows, op);
  }

  template <typename Op>
  static Result<columnar::ColumnPtr> Execute(const columnar::TypePtr& type, ExecutorArg a,
                                             ExecutorArg b, int64_t n, Op&& op) {
    if constexpr (std::is_same_v<Out, std::string_view>) {
      return ExecuteChecked(type, a, b, n,
                            [&op](A x, B y, StringAppender& out, RowContext&) { op(x, y, out); });
    } else {
      ValidityOut validity(n);
      ExecutorOutput<Out> out(n);
      if (!validity.AndArg(*a.column, a.constant) || !validity.AndArg(*b.column, b.constant))
        return out.Finish(type, &validity);
      ExecutorInput<A> left(*a.column);
      ExecutorInput<B> right(*b.column);
      if (a.constant && b.constant) {
        out.Repeat(n, op(left[0], right[0]));
      } else if (a.constant) {
        const A x = left[0];
        out.FillAll(n, [&op, x, right](int64_t row) { return op(x, right[row]); });
      } else if (b.constant) {
        const B y = right[0];
        out.FillAll(n, [&op, left, y](int64_t row) { return op(left[row], y); });
      } else {
        out.FillAll(n, [&op, left, right](int64_t row) { return op(left[row], right[row]); });
      }
      return out.Finish(type, &validity);
    }
  }

  template <typename Op>
  static Result<columnar::ColumnPtr> ExecuteChecked(const columnar::TypePtr& type, ExecutorArg a,
                                                    ExecutorArg b, int64_t n, Op&& op) {
    ValidityOut validity(n);
    ExecutorOutput<Out> out(n);
    if (!validity.AndArg(*a.column, a.constant) || !validity.AndArg(*b.column, b.constant))
      return out.Finish(type, &validity);
    ExecutorInput<A> left(*a.column);
    ExecutorInput<B> right(*b.column);
    Status st;
    if (a.constant && b.constant) {
      const A x = left[0];
      const B y = right[0];
      st = ExecuteOnce<Out>(n, &validity, &out,
                            [&op, x, y](int64_t, auto&&... rest) { return op(x, y, rest...); });
    } else if (a.constant) {
      const A x = left[0];
      st = ExecutorLoops::RunChecked<Out>(
          n, &validity, &out,
          [&op, x, right](int64_t row, auto&&... rest) { return op(x, right[row], rest...); });
    } else if (b.constant) {
      const B y = right[0];
      st = ExecutorLoops::RunChecked<Out>(
          n, &validity, &out,
          [&op, left, y](int64_t row, auto&&... rest) { return op(left[row], y, rest...); });
    } else {
      st = ExecutorLoops::RunChecked<Out>(n, &validity, &out,
                                          [&op, left, right](int64_t row, auto&&... rest) {
                                            return op(left[row], right[row], rest...);
                                          });
    }
    SILT_RETURN_NOT_OK(st);
    return out.Finish(type, &validity);
  }
};

}  // namespace silt::expr
