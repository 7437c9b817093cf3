// Buffer: a contiguous, 64-byte aligned block of bytes, counted against a
// MemoryPool. Columns hold their memory in Buffers (Arrow layout), shared
// immutably once a column is sealed.
//
// MemoryPool counts bytes currently allocated and the high-water mark; the
// stream module reads it to pause sources when in-flight bytes exceed the
// budget (backpressure).
//
// Thread safety: MemoryPool is thread-safe. A Buffer may be read from many
// threads once no thread mutates it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace silt {

class MemoryPool {
 public:
  // Allocates `size` bytes aligned to 64. Never returns null for size > 0
  // (aborts on out-of-memory, like operator new).
  uint8_t* Allocate(int64_t size);
  uint8_t* Reallocate(uint8_t* ptr, int64_t old_size, int64_t new_size);
  void Free(uint8_t* ptr, int64_t size);

  int64_t bytes_allocated() const { return bytes_.load(std::memory_order_relaxed); }
  int64_t max_memory() const { return max_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> bytes_{0};
  std::atomic<int64_t> max_{0};
};

// The process-wide pool used unless a caller passes another.
MemoryPool* DefaultMemoryPool();

class Buffer {
 public:
  explicit Buffer(MemoryPool* pool = DefaultMemoryPool()) : pool_(pool) {}
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;

  // Grows capacity to at least `capacity` bytes, preserving contents.
  void Reserve(int64_t capacity);
  // Sets size; grows capacity geometrically when needed. New bytes are zero.
  void Resize(int64_t size);
  // Appends `n` bytes. Up to 32 bytes are copied inline (two overlapping
  // moves of the largest power of two not above n): builders append a
  // short string per row (names, timestamps as text), where a call to
  // memcpy costs more than the copy. Longer runs go to memcpy.
  void Append(const void* data, int64_t n) {
    if (size_ + n > capacity_) Reserve(Grow(size_ + n));
    uint8_t* dst = data_ + size_;
    const auto* src = static_cast<const uint8_t*>(data);
    if (n > 32) {
      std::memcpy(dst, src, static_cast<size_t>(n));
    } else if (n >= 16) {
      CopyEnds<16>(dst, src, n);
    } else if (n >= 8) {
      CopyEnds<8>(dst, src, n);
    } else if (n >= 4) {
      CopyEnds<4>(dst, src, n);
    } else if (n > 0) {
      // 1 to 3 bytes: first, middle and last (some of them the same).
      dst[0] = src[0];
      dst[n / 2] = src[n / 2];
      dst[n - 1] = src[n - 1];
    }
    size_ += n;
  }
  // Sets size without initialising new bytes (unlike Resize).
  // REQUIRES: the caller writes every byte in [old size, size) before any
  // is read.
  void ResizeUninitialized(int64_t size) {
    if (size > capacity_) Reserve(Grow(size));
    size_ = size;
  }
  void Clear() { size_ = 0; }

  uint8_t* mutable_data() { return data_; }
  const uint8_t* data() const { return data_; }
  template <typename T>
  T* mutable_data_as() {
    return reinterpret_cast<T*>(data_);
  }
  template <typename T>
  const T* data_as() const {
    return reinterpret_cast<const T*>(data_);
  }
  int64_t size() const { return size_; }
  int64_t capacity() const { return capacity_; }
  std::string_view view() const {
    return std::string_view(reinterpret_cast<const char*>(data_), static_cast<size_t>(size_));
  }

 private:
  // Copies n bytes, kWidth <= n <= 2 * kWidth, as a move of the first and
  // one of the last kWidth bytes.
  template <int kWidth>
  static void CopyEnds(uint8_t* dst, const uint8_t* src, int64_t n) {
    uint8_t head[kWidth];
    uint8_t tail[kWidth];
    std::memcpy(head, src, kWidth);
    std::memcpy(tail, src + n - kWidth, kWidth);
    std::memcpy(dst, head, kWidth);
    std::memcpy(dst + n - kWidth, tail, kWidth);
  }
  int64_t Grow(int64_t min_capacity) const {
    int64_t c = capacity_ < 64 ? 64 : capacity_;
    while (c < min_capacity) c *= 2;
    return c;
  }
  MemoryPool* pool_;
  uint8_t* data_ = nullptr;
  int64_t size_ = 0;
  int64_t capacity_ = 0;
};

using BufferPtr = std::shared_ptr<Buffer>;

}  // namespace silt
