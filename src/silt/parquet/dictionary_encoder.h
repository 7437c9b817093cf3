// DictionaryEncoder<T>: the hash dictionary behind Parquet's dictionary
// encoding (Encodings.md, "RLE_DICTIONARY"). Each distinct value gets the next
// index in arrival order; data pages then carry the indices (RLE/bit-packed)
// and the column chunk's dictionary page carries the entries, PLAIN-encoded
// in index order.
//
// T is the writer's dense physical value: int32_t, int64_t, float, double,
// __int128 (decimals stored as FIXED_LEN_BYTE_ARRAY) or std::string_view
// (BYTE_ARRAY; the encoder copies the bytes it keeps). Floating point values
// are keyed by their bits so -0.0, +0.0 and NaN payloads stay distinct, as a
// dictionary must reproduce values exactly.
//
// Open addressing with linear probing over a power-of-two table; lookups are
// inline and allocation-free except when the table or the byte arena grows.
// The column writer watches plain_size() and falls back to PLAIN once it
// exceeds WriterOptions::dictionary_page_bytes_limit.
//
// Thread safety: one encoder per thread. Clear() keeps capacity.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

#include "silt/base/short_bytes.h"

namespace silt::parquet {

namespace dict_internal {

inline uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

uint64_t HashBytes(const char* data, size_t size);

template <typename T>
inline uint64_t Hash(const T& v) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    return HashBytes(v.data(), v.size());
  } else if constexpr (sizeof(T) <= 8) {
    // One 64x64->128-bit multiplication, its halves folded: every input bit
    // reaches the low bits the table indexes by (the xor keeps zero apart
    // from the multiplier's fixed point).
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    const unsigned __int128 product =
        static_cast<unsigned __int128>(bits ^ 0x2d358dccaa6c78a5ULL) * 0x9e3779b97f4a7c15ULL;
    return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
  } else {
    uint64_t parts[2];
    std::memcpy(parts, &v, 16);
    return Mix(parts[0] ^ Mix(parts[1] + 0x9e3779b97f4a7c15ULL));
  }
}

template <typename T>
inline bool BitEqual(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    return short_bytes::Equal(a, b);
  } else {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  }
}

}  // namespace dict_internal

template <typename T>
class DictionaryEncoder {
 public:
  DictionaryEncoder() { slots_.assign(kInitialSlots, 0); }

  // Appends the dictionary index of each of `count` values to `indices`
  // (a std::vector<uint32_t>, or the writer's ScratchVector<uint32_t>, whose
  // resize does not zero what this overwrites), inserting new values.
  template <typename IndexVector>
  void Encode(const T* values, int64_t count, IndexVector* indices) {
    const size_t base = indices->size();
    indices->resize(base + static_cast<size_t>(count));
    uint32_t* out = indices->data() + base;
    for (int64_t i = 0; i < count; ++i) out[i] = IndexOf(values[i]);
  }

  int64_t size() const { return static_cast<int64_t>(entries_.size()); }
  // Entries in index order.
  const T* entries() const { return entries_.data(); }
  // Bytes of the PLAIN-encoded dictionary page for fixed-width T of
  // `value_width` bytes, or, for byte arrays, lengths plus bytes.
  int64_t plain_size(int value_width) const {
    if constexpr (std::is_same_v<T, std::string_view>) {
      (void)value_width;
      return arena_bytes_ + 4 * size();
    } else {
      return size() * value_width;
    }
  }

  void Clear() {
    entries_.clear();
    hashes_.clear();
    std::fill(slots_.begin(), slots_.end(), 0);
    if constexpr (std::is_same_v<T, std::string_view>) {
      // The first block is kept for the next chunk (a column that falls
      // back to PLAIN clears its dictionary once per file).
      if (arena_.size() > 1) arena_.resize(1);
      block_used_ = 0;
      block_size_ = arena_.empty() ? 0 : kBlockSize;
      arena_bytes_ = 0;
    }
  }

 private:
  static constexpr size_t kInitialSlots = 1024;

  uint32_t IndexOf(const T& v) {
    const uint64_t h = dict_internal::Hash(v);
    const size_t mask = mask_;
    size_t slot = static_cast<size_t>(h) & mask;
    while (true) {
      const uint32_t e = slots_[slot];
      if (e == 0) break;
      const uint32_t idx = e - 1;
      if (hashes_[idx] == h && dict_internal::BitEqual(entries_[idx], v)) return idx;
      slot = (slot + 1) & mask;
    }
    const uint32_t idx = static_cast<uint32_t>(entries_.size());
    entries_.push_back(Store(v));
    hashes_.push_back(h);
    slots_[slot] = idx + 1;
    if (idx >= max_index_before_grow_) Grow();
    return idx;
  }

  void Grow() {
    std::vector<uint32_t> slots(slots_.size() * 2, 0);
    const size_t mask = slots.size() - 1;
    for (size_t idx = 0; idx < entries_.size(); ++idx) {
      size_t slot = static_cast<size_t>(hashes_[idx]) & mask;
      while (slots[slot] != 0) slot = (slot + 1) & mask;
      slots[slot] = static_cast<uint32_t>(idx + 1);
    }
    slots_.swap(slots);
    mask_ = slots_.size() - 1;
    max_index_before_grow_ = static_cast<uint32_t>(slots_.size() / 2);
  }

  // Byte arrays are copied into arena blocks that never move, so stored
  // views stay valid until Clear().
  T Store(const T& v) {
    if constexpr (std::is_same_v<T, std::string_view>) {
      arena_bytes_ += static_cast<int64_t>(v.size());
      if (v.empty()) return std::string_view();
      if (block_size_ - block_used_ < v.size()) {
        block_size_ = std::max<size_t>(kBlockSize, v.size());
        // Not zero-filled: every byte handed out is copied over first.
        arena_.push_back(std::make_unique_for_overwrite<char[]>(block_size_));
        block_used_ = 0;
      }
      char* dst = arena_.back().get() + block_used_;
      std::memcpy(dst, v.data(), v.size());
      block_used_ += v.size();
      return std::string_view(dst, v.size());
    } else {
      return v;
    }
  }

  static constexpr size_t kBlockSize = 256 * 1024;

  std::vector<uint32_t> slots_;  // entry index + 1, 0 = empty
  // slots_.size() - 1, and the index whose insertion grows the table (at
  // half full), kept beside it: the hot loop reads them per value.
  size_t mask_ = kInitialSlots - 1;
  uint32_t max_index_before_grow_ = kInitialSlots / 2;
  std::vector<T> entries_;
  std::vector<uint64_t> hashes_;
  // Byte-array storage.
  std::vector<std::unique_ptr<char[]>> arena_;
  size_t block_used_ = 0;
  size_t block_size_ = 0;
  int64_t arena_bytes_ = 0;
};

}  // namespace silt::parquet
