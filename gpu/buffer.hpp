// An owning, move-only buffer in a backend's memory.
#pragma once

#include <cstddef>
#include <utility>

#include "ops.hpp"

namespace dtsim::gpu {

template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(Ops<T>& ops, size_t count) : ops_(&ops), data_(ops.allocate(count)), count_(count) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& other) noexcept { swap(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    Buffer(std::move(other)).swap(*this);
    return *this;
  }
  ~Buffer() {
    if (data_) ops_->release(data_);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }

  void swap(Buffer& other) noexcept {
    std::swap(ops_, other.ops_);
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
  }

 private:
  Ops<T>* ops_ = nullptr;
  T* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace dtsim::gpu
