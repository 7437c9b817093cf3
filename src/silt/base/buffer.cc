#include "silt/base/buffer.h"

#include <cstdlib>
#include <new>
#include <utility>

namespace silt {

uint8_t* MemoryPool::Allocate(int64_t size) {
  if (size <= 0) return nullptr;
  size_t rounded = (static_cast<size_t>(size) + 63) & ~static_cast<size_t>(63);
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr) throw std::bad_alloc();
  int64_t now = bytes_.fetch_add(size, std::memory_order_relaxed) + size;
  int64_t prev = max_.load(std::memory_order_relaxed);
  while (now > prev && !max_.compare_exchange_weak(prev, now, std::memory_order_relaxed)) {
  }
  return static_cast<uint8_t*>(p);
}

uint8_t* MemoryPool::Reallocate(uint8_t* ptr, int64_t old_size, int64_t new_size) {
  uint8_t* fresh = Allocate(new_size);
  if (ptr != nullptr) {
    std::memcpy(fresh, ptr, static_cast<size_t>(old_size < new_size ? old_size : new_size));
    Free(ptr, old_size);
  }
  return fresh;
}

void MemoryPool::Free(uint8_t* ptr, int64_t size) {
  if (ptr == nullptr) return;
  std::free(ptr);
  bytes_.fetch_sub(size, std::memory_order_relaxed);
}

MemoryPool* DefaultMemoryPool() {
  static MemoryPool pool;
  return &pool;
}

Buffer::~Buffer() { pool_->Free(data_, capacity_); }

Buffer::Buffer(Buffer&& other) noexcept
    : pool_(other.pool_), data_(other.data_), size_(other.size_), capacity_(other.capacity_) {
  other.data_ = nullptr;
  other.size_ = other.capacity_ = 0;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    pool_->Free(data_, capacity_);
    pool_ = other.pool_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void Buffer::Reserve(int64_t capacity) {
  if (capacity <= capacity_) return;
  uint8_t* fresh = pool_->Allocate(capacity);
  if (size_ > 0) std::memcpy(fresh, data_, static_cast<size_t>(size_));
  pool_->Free(data_, capacity_);
  data_ = fresh;
  capacity_ = capacity;
}

void Buffer::Resize(int64_t size) {
  if (size > capacity_) Reserve(Grow(size));
  if (size > size_) std::memset(data_ + size_, 0, static_cast<size_t>(size - size_));
  size_ = size;
}

}  // namespace silt
