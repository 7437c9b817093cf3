#include "silt/parquet/rle_encoder.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace silt::parquet {

namespace {

constexpr int kMaxLiteralGroups = 63;  // header (63 << 1 | 1) fits one byte

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

}  // namespace

void RleEncoder::Reset(int bit_width) {
  bit_width_ = bit_width;
  out_.clear();
  num_buffered_ = 0;
  run_value_ = 0;
  run_length_ = 0;
  literal_header_pos_ = -1;
  literal_groups_ = 0;
  num_values_base_ = 0;
}

void RleEncoder::PutRun(uint32_t value, int64_t count) {
  // Fill the partial group first so the bulk of the run can extend a
  // repeated run directly.
  while (count > 0 && (num_buffered_ != 0 || (run_length_ > 0 && value != run_value_))) {
    Put(value);
    --count;
    if (num_buffered_ == 0 && run_length_ > 0 && value == run_value_) break;
  }
  if (count == 0) return;
  if (num_buffered_ == 0 && run_length_ > 0 && value == run_value_) {
    run_length_ += count;
    return;
  }
  // No run pending and nothing buffered: start a run once 8 values are
  // known to be equal, which they are when count >= 8.
  if (count >= 8) {
    EndLiteralRun();
    run_value_ = value;
    run_length_ = count;
    return;
  }
  for (int64_t i = 0; i < count; ++i) Put(value);
}

void RleEncoder::PutMany(const uint32_t* values, int64_t count) {
  int64_t pos = 0;
  while (pos < count) {
    if (num_buffered_ != 0 || pos + 8 > count) {
      Put(values[pos++]);
    } else if (run_length_ > 0 && values[pos] == run_value_) {
      // Put()'s first case: the pending run takes an equal value.
      ++run_length_;
      ++pos;
    } else {
      // Put() would buffer these 8 and flush them as one group: take them
      // where they are.
      FlushGroupOf(values + pos);
      pos += 8;
    }
  }
}

void RleEncoder::FlushGroupOf(const uint32_t* values) {
  const uint32_t v = values[0];
  bool all_equal = true;
  for (int i = 1; i < 8; ++i) all_equal &= values[i] == v;
  if (all_equal) {
    if (run_length_ > 0 && run_value_ == v) {
      run_length_ += 8;
      return;
    }
    if (run_length_ > 0) EmitRepeatedRun();
    // A repeated run needs at least 8 values to beat bit-packing; this group
    // starts one and closes any literal run before it.
    EndLiteralRun();
    run_value_ = v;
    run_length_ = 8;
    return;
  }
  if (run_length_ > 0) EmitRepeatedRun();
  AppendLiteralGroup(values);
}

void RleEncoder::EmitRepeatedRun() {
  EndLiteralRun();
  AppendVarint(&out_, static_cast<uint64_t>(run_length_) << 1);
  const int value_bytes = (bit_width_ + 7) / 8;
  uint32_t v = run_value_;
  for (int i = 0; i < value_bytes; ++i) {
    out_.push_back(static_cast<char>(v & 0xFF));
    v >>= 8;
  }
  num_values_base_ += run_length_;
  run_length_ = 0;
}

void RleEncoder::EndLiteralRun() {
  if (literal_header_pos_ < 0) return;
  out_[static_cast<size_t>(literal_header_pos_)] = static_cast<char>((literal_groups_ << 1) | 1);
  literal_header_pos_ = -1;
  literal_groups_ = 0;
}

void RleEncoder::AppendLiteralGroup(const uint32_t* values) {
  if (literal_header_pos_ < 0) {
    literal_header_pos_ = static_cast<int64_t>(out_.size());
    out_.push_back(0);  // header, patched by EndLiteralRun
  }
  // Pack 8 values LSB-first: exactly bit_width_ bytes (at most 32), built
  // on the stack and appended at once; up to 16 bits wide (dictionary
  // indices, levels) the group is one 128-bit word.
  if constexpr (std::endian::native == std::endian::little) {
    if (bit_width_ <= 8) {
      // Up to 8 bits wide (levels, small dictionaries) the group fits one
      // 64-bit word, whose shifts cost less than the 128-bit ones below.
      uint64_t word = 0;
      for (int i = 0; i < 8; ++i) word |= static_cast<uint64_t>(values[i]) << (i * bit_width_);
      char bytes[sizeof(word)];
      std::memcpy(bytes, &word, sizeof(word));
      out_.append(bytes, static_cast<size_t>(bit_width_));
      num_values_base_ += 8;
      if (++literal_groups_ == kMaxLiteralGroups) EndLiteralRun();
      return;
    }
    if (bit_width_ <= 16) {
      unsigned __int128 word = 0;
      for (int i = 0; i < 8; ++i) {
        word |= static_cast<unsigned __int128>(values[i]) << (i * bit_width_);
      }
      char bytes[sizeof(word)];
      std::memcpy(bytes, &word, sizeof(word));
      out_.append(bytes, static_cast<size_t>(bit_width_));
      num_values_base_ += 8;
      if (++literal_groups_ == kMaxLiteralGroups) EndLiteralRun();
      return;
    }
  }
  char packed[32];
  int packed_bytes = 0;
  uint64_t acc = 0;
  int bits = 0;
  for (int i = 0; i < 8; ++i) {
    acc |= static_cast<uint64_t>(values[i]) << bits;
    bits += bit_width_;
    while (bits >= 8) {
      packed[packed_bytes++] = static_cast<char>(acc & 0xFF);
      acc >>= 8;
      bits -= 8;
    }
  }
  out_.append(packed, static_cast<size_t>(packed_bytes));
  num_values_base_ += 8;
  if (++literal_groups_ == kMaxLiteralGroups) EndLiteralRun();
}

int64_t RleEncoder::EstimatedSize() const {
  // Emitted bytes, a pending run (header + value), a padded final group.
  return static_cast<int64_t>(out_.size()) + 10 + 4 + bit_width_ + 1;
}

std::string_view RleEncoder::Finish() {
  if (run_length_ > 0) {
    if (num_buffered_ > 0 && std::all_of(buffered_, buffered_ + num_buffered_,
                                         [&](uint32_t x) { return x == run_value_; })) {
      run_length_ += num_buffered_;
      num_buffered_ = 0;
    }
    EmitRepeatedRun();
  }
  if (num_buffered_ > 0) {
    const uint32_t v = buffered_[0];
    bool all_equal =
        std::all_of(buffered_, buffered_ + num_buffered_, [&](uint32_t x) { return x == v; });
    if (all_equal && literal_header_pos_ < 0) {
      run_value_ = v;
      run_length_ = num_buffered_;
      num_buffered_ = 0;
      EmitRepeatedRun();
    } else {
      // Pad the last group with zeros; readers stop at the value count.
      int n = num_buffered_;
      for (int i = n; i < 8; ++i) buffered_[i] = 0;
      AppendLiteralGroup(buffered_);
      num_values_base_ -= 8 - n;
      num_buffered_ = 0;
    }
  }
  EndLiteralRun();
  return out_;
}

}  // namespace silt::parquet
