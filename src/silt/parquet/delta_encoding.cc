#include "silt/parquet/delta_encoding.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

namespace silt::parquet {

namespace {

constexpr uint64_t kBlockSize = 128;
constexpr uint64_t kMiniblocks = 4;
constexpr uint64_t kMiniblockSize = kBlockSize / kMiniblocks;

class ByteReader {
 public:
  ByteReader(const uint8_t* data, int64_t size) : data_(data), size_(size) {}

  bool ReadVarint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= size_) return false;
      const uint8_t b = data_[pos_++];
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    return false;
  }
  bool ReadZigZag(int64_t* v) {
    uint64_t u;
    if (!ReadVarint(&u)) return false;
    *v = static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
    return true;
  }
  int64_t pos() const { return pos_; }
  int64_t remaining() const { return size_ - pos_; }
  const uint8_t* here() const { return data_ + pos_; }
  void Skip(int64_t n) { pos_ += n; }

 private:
  const uint8_t* data_;
  int64_t size_;
  int64_t pos_ = 0;
};

// Value `index` of a little-endian bit-packed run of `width`-bit values.
// REQUIRES: the run holds (index + 1) * width bits.
inline uint64_t UnpackAt(const uint8_t* p, int64_t index, int width, int64_t bytes) {
  const int64_t bit = index * width;
  const int64_t first = bit >> 3;
  const int64_t last = std::min(bytes, (bit + width + 7) >> 3);
  unsigned __int128 acc = 0;
  for (int64_t b = last - 1; b >= first; --b) acc = (acc << 8) | p[b];
  acc >>= (bit & 7);
  if (width == 64) return static_cast<uint64_t>(acc);
  return static_cast<uint64_t>(acc) & ((uint64_t{1} << width) - 1);
}

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutZigZag(int64_t v, std::string* out) {
  PutVarint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63), out);
}

Status Truncated(const char* what) {
  return Status::Corruption(what, " stream truncated or malformed");
}

}  // namespace

template <typename T>
Status DeltaBinaryPackedDecode(const uint8_t* data, int64_t size, int64_t n, T* out,
                               int64_t* consumed) {
  static_assert(std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>);
  using U = std::make_unsigned_t<T>;
  constexpr int kMaxWidth = static_cast<int>(sizeof(T) * 8);
  ByteReader r(data, size);
  uint64_t block_size, miniblocks, total;
  int64_t first;
  if (!r.ReadVarint(&block_size) || !r.ReadVarint(&miniblocks) || !r.ReadVarint(&total) ||
      !r.ReadZigZag(&first)) {
    return Truncated("DELTA_BINARY_PACKED header");
  }
  if (block_size == 0 || block_size % 128 != 0 || block_size > (1u << 20) || miniblocks == 0 ||
      block_size % miniblocks != 0 || (block_size / miniblocks) % 32 != 0) {
    return Status::Corruption("DELTA_BINARY_PACKED block of ", block_size, " values in ",
                              miniblocks, " miniblocks");
  }
  if (static_cast<uint64_t>(n) > total) {
    return Status::Corruption("DELTA_BINARY_PACKED stream holds ", total, " values, ", n,
                              " expected");
  }
  const int64_t per_mini = static_cast<int64_t>(block_size / miniblocks);
  if (n > 0) out[0] = static_cast<T>(first);
  U prev = static_cast<U>(first);
  int64_t done = n > 0 ? 1 : 0;
  uint8_t widths[256];
  while (done < n) {
    int64_t min_delta;
    if (!r.ReadZigZag(&min_delta)) return Truncated("DELTA_BINARY_PACKED block");
    if (static_cast<uint64_t>(r.remaining()) < miniblocks) {
      return Truncated("DELTA_BINARY_PACKED bit widths");
    }
    const uint8_t* w = r.here();
    if (miniblocks <= sizeof(widths)) {
      std::memcpy(widths, w, miniblocks);
      w = widths;
    }
    r.Skip(static_cast<int64_t>(miniblocks));
    for (uint64_t m = 0; m < miniblocks && done < n; ++m) {
      const int width = w[m];
      if (width > kMaxWidth) {
        return Status::Corruption("DELTA_BINARY_PACKED bit width ", width, " for ", kMaxWidth,
                                  "-bit values");
      }
      const int64_t bytes = per_mini * width / 8;
      const int64_t take = std::min(per_mini, n - done);
      const int64_t needed = (take * width + 7) / 8;
      if (r.remaining() < needed) return Truncated("DELTA_BINARY_PACKED miniblock");
      const uint8_t* p = r.here();
      const int64_t avail = std::min(bytes, r.remaining());
      for (int64_t i = 0; i < take; ++i) {
        const U packed = static_cast<U>(width == 0 ? 0 : UnpackAt(p, i, width, avail));
        const U delta = static_cast<U>(static_cast<U>(min_delta) + packed);
        prev = static_cast<U>(prev + delta);
        out[done + i] = static_cast<T>(prev);
      }
      done += take;
      r.Skip(avail);
    }
  }
  *consumed = r.pos();
  return Status::OK();
}

template <typename T>
void DeltaBinaryPackedEncode(const T* values, int64_t n, std::string* out) {
  using U = std::make_unsigned_t<T>;
  PutVarint(kBlockSize, out);
  PutVarint(kMiniblocks, out);
  PutVarint(static_cast<uint64_t>(n), out);
  PutZigZag(n > 0 ? static_cast<int64_t>(values[0]) : 0, out);
  U deltas[kBlockSize];
  for (int64_t start = 1; start < n; start += kBlockSize) {
    const int64_t count = std::min<int64_t>(kBlockSize, n - start);
    T min_delta = std::numeric_limits<T>::max();
    for (int64_t i = 0; i < count; ++i) {
      const T d =
          static_cast<T>(static_cast<U>(values[start + i]) - static_cast<U>(values[start + i - 1]));
      deltas[i] = static_cast<U>(d);
      min_delta = std::min(min_delta, d);
    }
    PutZigZag(static_cast<int64_t>(min_delta), out);
    uint8_t widths[kMiniblocks] = {0, 0, 0, 0};
    const int64_t used = (count + kMiniblockSize - 1) / kMiniblockSize;
    for (int64_t m = 0; m < used; ++m) {
      U max_bits = 0;
      for (int64_t i = m * kMiniblockSize; i < std::min<int64_t>(count, (m + 1) * kMiniblockSize);
           ++i) {
        deltas[i] = static_cast<U>(deltas[i] - static_cast<U>(min_delta));
        max_bits |= deltas[i];
      }
      int width = 0;
      while (width < static_cast<int>(sizeof(T) * 8) && (max_bits >> width) != 0) ++width;
      widths[m] = static_cast<uint8_t>(width);
    }
    out->append(reinterpret_cast<const char*>(widths), kMiniblocks);
    for (int64_t m = 0; m < used; ++m) {
      const int width = widths[m];
      // Full miniblocks, zero-padded past the last value.
      const size_t base = out->size();
      out->resize(base + kMiniblockSize * static_cast<size_t>(width) / 8, '\0');
      uint8_t* p = reinterpret_cast<uint8_t*>(out->data() + base);
      for (int64_t i = 0; i < static_cast<int64_t>(kMiniblockSize) && width > 0; ++i) {
        const int64_t idx = m * kMiniblockSize + i;
        if (idx >= count) break;
        const uint64_t v = static_cast<uint64_t>(deltas[idx]);
        const int64_t bit = i * width;
        for (int b = 0; b < width; ++b) {
          if ((v >> b) & 1) p[(bit + b) >> 3] |= static_cast<uint8_t>(1u << ((bit + b) & 7));
        }
      }
    }
  }
}

template Status DeltaBinaryPackedDecode<int32_t>(const uint8_t*, int64_t, int64_t, int32_t*,
                                                 int64_t*);
template Status DeltaBinaryPackedDecode<int64_t>(const uint8_t*, int64_t, int64_t, int64_t*,
                                                 int64_t*);
template void DeltaBinaryPackedEncode<int32_t>(const int32_t*, int64_t, std::string*);
template void DeltaBinaryPackedEncode<int64_t>(const int64_t*, int64_t, std::string*);

Status DeltaLengthByteArrayDecode(const uint8_t* data, int64_t size, int64_t n,
                                  std::string_view* views, std::vector<int32_t>* scratch) {
  scratch->resize(static_cast<size_t>(n));
  int64_t pos = 0;
  SILT_RETURN_NOT_OK(DeltaBinaryPackedDecode<int32_t>(data, size, n, scratch->data(), &pos));
  const char* base = reinterpret_cast<const char*>(data);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t len = (*scratch)[static_cast<size_t>(i)];
    if (len < 0 || len > size - pos) {
      return Status::Corruption("DELTA_LENGTH_BYTE_ARRAY value ", i, " of ", len,
                                " bytes runs past the end of its page");
    }
    views[i] = std::string_view(base + pos, static_cast<size_t>(len));
    pos += len;
  }
  return Status::OK();
}

void DeltaLengthByteArrayEncode(const std::string_view* values, int64_t n, std::string* out) {
  std::vector<int32_t> lengths(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    lengths[static_cast<size_t>(i)] = static_cast<int32_t>(values[i].size());
  }
  DeltaBinaryPackedEncode<int32_t>(lengths.data(), n, out);
  for (int64_t i = 0; i < n; ++i) out->append(values[i]);
}

Status DeltaByteArrayDecode(const uint8_t* data, int64_t size, int64_t n, std::string_view* views,
                            std::string* storage, std::vector<int32_t>* scratch) {
  std::vector<int32_t> prefixes(static_cast<size_t>(n));
  int64_t pos = 0;
  SILT_RETURN_NOT_OK(DeltaBinaryPackedDecode<int32_t>(data, size, n, prefixes.data(), &pos));
  SILT_RETURN_NOT_OK(DeltaLengthByteArrayDecode(data + pos, size - pos, n, views, scratch));
  // Total size first, so `storage` never reallocates under the views.
  int64_t total = 0;
  int64_t prev_len = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t prefix = prefixes[static_cast<size_t>(i)];
    if (prefix < 0 || prefix > prev_len) {
      return Status::Corruption("DELTA_BYTE_ARRAY value ", i, " reuses ", prefix, " bytes of a ",
                                prev_len, "-byte predecessor");
    }
    prev_len = prefix + static_cast<int64_t>(views[i].size());
    total += prev_len;
    if (total > std::numeric_limits<int32_t>::max()) {
      return Status::Corruption("DELTA_BYTE_ARRAY page expands past 2 GiB");
    }
  }
  storage->clear();
  storage->reserve(static_cast<size_t>(total));
  std::string_view prev;
  for (int64_t i = 0; i < n; ++i) {
    const size_t start = storage->size();
    storage->append(prev.substr(0, static_cast<size_t>(prefixes[static_cast<size_t>(i)])));
    storage->append(views[i]);
    views[i] = std::string_view(storage->data() + start, storage->size() - start);
    prev = views[i];
  }
  return Status::OK();
}

void DeltaByteArrayEncode(const std::string_view* values, int64_t n, std::string* out) {
  std::vector<int32_t> prefixes(static_cast<size_t>(n));
  std::vector<std::string_view> suffixes(static_cast<size_t>(n));
  std::string_view prev;
  for (int64_t i = 0; i < n; ++i) {
    const std::string_view v = values[i];
    size_t common = 0;
    const size_t limit = std::min(prev.size(), v.size());
    while (common < limit && prev[common] == v[common]) ++common;
    prefixes[static_cast<size_t>(i)] = static_cast<int32_t>(common);
    suffixes[static_cast<size_t>(i)] = v.substr(common);
    prev = v;
  }
  DeltaBinaryPackedEncode<int32_t>(prefixes.data(), n, out);
  DeltaLengthByteArrayEncode(suffixes.data(), n, out);
}

Status ByteStreamSplitDecode(const uint8_t* data, int64_t size, int64_t n, int width,
                             uint8_t* out) {
  if (width <= 0 || size / width < n) {
    return Status::Corruption("BYTE_STREAM_SPLIT page of ", size, " bytes holds fewer than ", n,
                              " values of ", width, " bytes");
  }
  // The streams span the whole page: its value count is size / width.
  const int64_t stride = size / width;
  for (int b = 0; b < width; ++b) {
    const uint8_t* stream = data + b * stride;
    for (int64_t i = 0; i < n; ++i) out[i * width + b] = stream[i];
  }
  return Status::OK();
}

void ByteStreamSplitEncode(const uint8_t* values, int64_t n, int width, std::string* out) {
  const size_t base = out->size();
  out->resize(base + static_cast<size_t>(n * width));
  uint8_t* dst = reinterpret_cast<uint8_t*>(out->data() + base);
  for (int b = 0; b < width; ++b) {
    for (int64_t i = 0; i < n; ++i) dst[b * n + i] = values[i * width + b];
  }
}

}  // namespace silt::parquet
