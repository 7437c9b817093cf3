// RleDecoder: reads Parquet's RLE / bit-packing hybrid encoding (see
// rle_encoder.h) from untrusted bytes.
//
// GetBatch decodes whole runs at a time: a repeated run becomes a fill, a
// bit-packed run is unpacked 8 values per step. Input that ends early or has
// malformed run headers makes GetBatch return fewer values than asked and
// sets corrupt(); callers turn that into a Corruption status naming the
// column and page.
//
// Thread safety: one decoder per thread. The decoder borrows the bytes.
#pragma once

#include <cstdint>
#include <cstring>

namespace silt::parquet {

class RleDecoder {
 public:
  RleDecoder() = default;
  // Decodes [data, data + size) with `bit_width` bits per value.
  // REQUIRES: 0 <= bit_width <= 32.
  RleDecoder(const uint8_t* data, int64_t size, int bit_width) { Reset(data, size, bit_width); }

  void Reset(const uint8_t* data, int64_t size, int bit_width);

  // Decodes up to `n` values into `out`. Returns the number decoded, fewer
  // than `n` only when the input ends (check corrupt() to tell malformed
  // input from a legitimately short stream). T is any unsigned or signed
  // integer type wide enough for the bit width.
  template <typename T>
  int64_t GetBatch(T* out, int64_t n);

  // Decodes `n` values of bit width 1 (definition levels of a flat optional
  // column) as bits into `bits` starting at bit `bit_offset`: 1 = defined.
  // Returns the number decoded; `*ones` receives how many were 1.
  int64_t GetBits(uint8_t* bits, int64_t bit_offset, int64_t n, int64_t* ones);

  bool corrupt() const { return corrupt_; }
  // Bytes consumed by the runs decoded so far (the whole input once
  // exhausted).
  int64_t position() const { return pos_; }

 private:
  // Loads the next run header; false at end of input or on corruption.
  bool NextRun();
  // Unpacks the next 8 values of the current bit-packed run.
  void UnpackGroup(uint32_t* out);

  const uint8_t* data_ = nullptr;
  int64_t size_ = 0;
  int64_t pos_ = 0;
  int bit_width_ = 0;
  uint32_t mask_ = 0;
  bool corrupt_ = false;

  // Current run: repeat_left_ copies of repeat_value_, or literal_left_
  // values bit-packed starting at pos_ (consumed a group at a time; the
  // unpacked group sits in group_ with group_pos_ values already used).
  int64_t repeat_left_ = 0;
  uint32_t repeat_value_ = 0;
  int64_t literal_left_ = 0;
  uint32_t group_[8];
  int group_pos_ = 8;
};

template <typename T>
int64_t RleDecoder::GetBatch(T* out, int64_t n) {
  int64_t done = 0;
  while (done < n) {
    if (repeat_left_ > 0) {
      int64_t take = repeat_left_ < n - done ? repeat_left_ : n - done;
      const T v = static_cast<T>(repeat_value_);
      for (int64_t i = 0; i < take; ++i) out[done + i] = v;
      repeat_left_ -= take;
      done += take;
      continue;
    }
    if (literal_left_ > 0) {
      // Drain a partly used group first.
      while (group_pos_ < 8 && literal_left_ > 0 && done < n) {
        out[done++] = static_cast<T>(group_[group_pos_++]);
        --literal_left_;
      }
      // Whole groups straight into the output.
      while (literal_left_ >= 8 && n - done >= 8) {
        uint32_t tmp[8];
        UnpackGroup(tmp);
        if (corrupt_) return done;
        for (int i = 0; i < 8; ++i) out[done + i] = static_cast<T>(tmp[i]);
        done += 8;
        literal_left_ -= 8;
      }
      if (literal_left_ > 0 && done < n && group_pos_ == 8) {
        UnpackGroup(group_);
        if (corrupt_) return done;
        group_pos_ = 0;
      }
      continue;
    }
    if (!NextRun()) break;
  }
  return done;
}

}  // namespace silt::parquet
