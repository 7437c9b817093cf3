// RleEncoder: Parquet's RLE / bit-packing hybrid encoding (Encodings.md,
// "RLE = 3"), used for definition levels, dictionary indices and RLE
// booleans.
//
// Values arrive one at a time (Put) or as runs (PutRun). Every group of 8
// values is either folded into a repeated run (when all 8 equal the value
// being repeated) or bit-packed into the current literal run; a repeated run
// grows without buffering while the same value keeps coming, so long runs of
// "not null" cost O(1) per value and a few bytes in total. Literal runs are
// capped at 63 groups so their header fits the one byte reserved for it.
//
// The output has no length prefix; callers add the 4-byte prefix where the
// page format needs one.
//
// Thread safety: one encoder per thread. Reuse via Clear() keeps capacity.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace silt::parquet {

class RleEncoder {
 public:
  // REQUIRES: 0 <= bit_width <= 32.
  explicit RleEncoder(int bit_width = 1) : bit_width_(bit_width) {}

  int bit_width() const { return bit_width_; }
  // Resets to empty with a new bit width, keeping buffer capacity.
  void Reset(int bit_width);

  // REQUIRES: value < 2^bit_width.
  void Put(uint32_t value) {
    if (num_buffered_ == 0 && run_length_ > 0 && value == run_value_) {
      ++run_length_;
      return;
    }
    buffered_[num_buffered_++] = value;
    if (num_buffered_ == 8) FlushGroup();
  }
  // Appends `count` copies of `value`.
  void PutRun(uint32_t value, int64_t count);
  // Appends values[0, count): the same encoding as Put() of each in turn,
  // with whole groups of 8 taken from `values` where they are.
  // REQUIRES: every value < 2^bit_width.
  void PutMany(const uint32_t* values, int64_t count);

  // Number of values put since the last Reset/Finish.
  int64_t num_values() const { return num_values_base_ + run_length_ + num_buffered_; }
  // Upper bound of the encoded size if finished now.
  int64_t EstimatedSize() const;

  // Ends all runs and returns the encoding. The view stays valid until the
  // next call on the encoder; Reset() starts a new encoding.
  std::string_view Finish();

 private:
  void FlushGroup() {
    num_buffered_ = 0;
    FlushGroupOf(buffered_);
  }
  // Folds the 8 `values` into the repeated run or bit-packs them.
  // REQUIRES: num_buffered_ == 0.
  void FlushGroupOf(const uint32_t* values);
  void EmitRepeatedRun();
  void EndLiteralRun();
  void AppendLiteralGroup(const uint32_t* values);

  int bit_width_;
  std::string out_;
  uint32_t buffered_[8];
  int num_buffered_ = 0;
  // The pending repeated run (not yet emitted).
  uint32_t run_value_ = 0;
  int64_t run_length_ = 0;
  // Open literal run: header byte position in out_ and groups so far.
  int64_t literal_header_pos_ = -1;
  int literal_groups_ = 0;
  // Values already committed to out_ (emitted runs and literal groups).
  int64_t num_values_base_ = 0;
};

// Minimum bit width able to represent `max_value` (0 for 0).
inline int BitWidthFor(uint64_t max_value) {
  int w = 0;
  while (max_value != 0) {
    ++w;
    max_value >>= 1;
  }
  return w;
}

}  // namespace silt::parquet
