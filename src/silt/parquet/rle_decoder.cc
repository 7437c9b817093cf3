#include "silt/parquet/rle_decoder.h"

#include <algorithm>

#include "silt/base/bits.h"
#include "silt/columnar/column.h"

namespace silt::parquet {

void RleDecoder::Reset(const uint8_t* data, int64_t size, int bit_width) {
  data_ = data;
  size_ = size;
  pos_ = 0;
  bit_width_ = bit_width;
  mask_ = bit_width >= 32 ? 0xFFFFFFFFu : ((1u << bit_width) - 1);
  corrupt_ = bit_width < 0 || bit_width > 32;
  repeat_left_ = 0;
  repeat_value_ = 0;
  literal_left_ = 0;
  group_pos_ = 8;
}

bool RleDecoder::NextRun() {
  if (corrupt_ || pos_ >= size_) return false;
  uint64_t header = 0;
  int shift = 0;
  while (true) {
    if (pos_ >= size_ || shift > 35) {
      corrupt_ = true;
      return false;
    }
    uint8_t b = data_[pos_++];
    header |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) break;
    shift += 7;
  }
  if (header & 1) {
    int64_t groups = static_cast<int64_t>(header >> 1);
    if (groups == 0) {
      corrupt_ = true;
      return false;
    }
    int64_t values = groups * 8;
    if (bit_width_ > 0) {
      // Some writers end the stream without padding the last group; keep the
      // values whose bits are present.
      int64_t available = (size_ - pos_) * 8 / bit_width_;
      values = std::min(values, available);
      if (values == 0) {
        corrupt_ = true;
        return false;
      }
    }
    literal_left_ = values;
    group_pos_ = 8;
    return true;
  }
  int64_t count = static_cast<int64_t>(header >> 1);
  if (count == 0) {
    corrupt_ = true;
    return false;
  }
  const int value_bytes = (bit_width_ + 7) / 8;
  if (size_ - pos_ < value_bytes) {
    corrupt_ = true;
    return false;
  }
  uint32_t v = 0;
  for (int i = 0; i < value_bytes; ++i) v |= static_cast<uint32_t>(data_[pos_ + i]) << (8 * i);
  pos_ += value_bytes;
  if ((v & ~mask_) != 0) {
    corrupt_ = true;
    return false;
  }
  repeat_value_ = v;
  repeat_left_ = count;
  return true;
}

void RleDecoder::UnpackGroup(uint32_t* out) {
  const int w = bit_width_;
  if (w == 0) {
    std::fill(out, out + 8, 0u);
    return;
  }
  // The 8-byte loads below read up to w + 7 bytes from the group's start:
  // straight from the input when that much is left, else from a
  // zero-padded copy of what remains.
  const uint8_t* src = data_ + pos_;
  uint8_t buf[40];
  if (size_ - pos_ >= w + 8) {
    pos_ += w;
  } else {
    std::memset(buf, 0, sizeof(buf));
    const int64_t avail = std::min<int64_t>(w, size_ - pos_);
    std::memcpy(buf, data_ + pos_, static_cast<size_t>(avail));
    pos_ += avail;
    src = buf;
  }
  for (int i = 0; i < 8; ++i) {
    const int bit = i * w;
    uint64_t word;
    std::memcpy(&word, src + bit / 8, 8);
    out[i] = static_cast<uint32_t>(word >> (bit & 7)) & mask_;
  }
}

int64_t RleDecoder::GetBits(uint8_t* bits, int64_t bit_offset, int64_t n, int64_t* ones) {
  int64_t done = 0;
  int64_t set = 0;
  while (done < n) {
    if (repeat_left_ > 0) {
      int64_t take = std::min(repeat_left_, n - done);
      int64_t start = bit_offset + done;
      if (repeat_value_ != 0) {
        // Set a bit range: partial head byte, whole bytes, partial tail.
        int64_t i = start;
        int64_t end = start + take;
        while (i < end && (i & 7) != 0) columnar::SetBit(bits, i++);
        if (end - i >= 8) {
          std::memset(bits + i / 8, 0xFF, static_cast<size_t>((end - i) / 8));
          i += (end - i) / 8 * 8;
        }
        while (i < end) columnar::SetBit(bits, i++);
        set += take;
      } else {
        for (int64_t i = start; i < start + take; ++i) columnar::ClearBit(bits, i);
      }
      repeat_left_ -= take;
      done += take;
      continue;
    }
    if (literal_left_ > 0) {
      if (bit_width_ == 1 && group_pos_ == 8) {
        // Bit-packed width-1 values are already a bitmap (LSB first): copy
        // whole bytes, shifted into place when the output is not aligned.
        const int64_t bytes = std::min(std::min(literal_left_, n - done) / 8, size_ - pos_);
        if (bytes > 0) {
          const uint8_t* src = data_ + pos_;
          const int64_t out_bit = bit_offset + done;
          const int shift = static_cast<int>(out_bit & 7);
          uint8_t* dst = bits + out_bit / 8;
          if (shift == 0) {
            std::memcpy(dst, src, static_cast<size_t>(bytes));
          } else {
            const auto low = static_cast<uint8_t>((1u << shift) - 1);
            for (int64_t k = 0; k < bytes; ++k) {
              const uint8_t b = src[k];
              dst[k] = static_cast<uint8_t>((dst[k] & low) | (b << shift));
              dst[k + 1] = static_cast<uint8_t>((dst[k + 1] & ~low) | (b >> (8 - shift)));
            }
          }
          set += CountSetBits(src, bytes * 8);
          pos_ += bytes;
          literal_left_ -= bytes * 8;
          done += bytes * 8;
          continue;
        }
      }
      if (group_pos_ == 8) {
        UnpackGroup(group_);
        group_pos_ = 0;
      }
      while (group_pos_ < 8 && literal_left_ > 0 && done < n) {
        int64_t i = bit_offset + done;
        if (group_[group_pos_++] != 0) {
          columnar::SetBit(bits, i);
          ++set;
        } else {
          columnar::ClearBit(bits, i);
        }
        --literal_left_;
        ++done;
      }
      continue;
    }
    if (!NextRun()) break;
  }
  *ones += set;
  return done;
}

}  // namespace silt::parquet
