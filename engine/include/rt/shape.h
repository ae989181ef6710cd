// rt/shape.h — Shape: a tensor's sizes or strides, stored inline up to 5 dimensions.
//
//   rt::Shape s = {64, 3, 32, 32};       // no heap allocation: 4 <= Shape::kInline
//   s.push_back(2);                      // still inline (5 dims)
//   s.insert(s.begin(), 8);              // 6 dims: moves to the heap, like a std::vector
//   std::vector<int64_t> v = s;          // converts both ways, for code that holds vectors
//   bool same = (s == rt::Shape(v));     // element-wise comparison
//
// Every tensor carries two of these (sizes and strides) and every op computes a few more, so
// keeping them out of the heap removes most of the allocations an op makes besides its
// output's data (Note [Inline shapes]). The interface is std::vector<int64_t>'s, so code reads
// the same; iterators are plain pointers, invalidated by any insertion or erasure.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "rt/export.h"

RT_API_BEGIN

namespace rt {

// Note [Inline shapes]
// ~~~~~~~~~~~~~~~~~~~~
// Up to kInline elements live in the object itself; more go to a heap array that grows by
// doubling. Five covers the shapes training uses (NCHW plus one, [B, T, H, D]) the way
// PyTorch's DimVector does; a 6-dim tensor still works, it just allocates like before.
// Moving an inline Shape copies its elements (at most 40 bytes); moving a heap one steals
// the array.
class Shape {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;
  static constexpr size_t kInline = 5;

  Shape() noexcept = default;
  explicit Shape(size_t n) { assign(n, 0); }
  Shape(size_t n, int64_t value) { assign(n, value); }
  Shape(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }
  template <std::input_iterator It>
  Shape(It first, It last) { assign(first, last); }
  Shape(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }  // NOLINT: vectors pass as shapes
  Shape(const Shape& o) { assign(o.begin(), o.end()); }
  Shape(Shape&& o) noexcept { take(o); }
  ~Shape() { release(); }

  Shape& operator=(const Shape& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  operator std::vector<int64_t>() const { return std::vector<int64_t>(begin(), end()); }  // NOLINT

  // ---- access -----------------------------------------------------------------------------
  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_t capacity() const noexcept { return cap_; }
  int64_t* data() noexcept { return data_; }
  const int64_t* data() const noexcept { return data_; }
  int64_t& operator[](size_t i) noexcept { return data_[i]; }
  const int64_t& operator[](size_t i) const noexcept { return data_[i]; }
  int64_t& at(size_t i) { return data_[checked(i)]; }
  const int64_t& at(size_t i) const { return data_[checked(i)]; }
  int64_t& front() noexcept { return data_[0]; }
  const int64_t& front() const noexcept { return data_[0]; }
  int64_t& back() noexcept { return data_[size_ - 1]; }
  const int64_t& back() const noexcept { return data_[size_ - 1]; }
  iterator begin() noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator begin() const noexcept { return data_; }
  const_iterator end() const noexcept { return data_ + size_; }
  const_iterator cbegin() const noexcept { return data_; }
  const_iterator cend() const noexcept { return data_ + size_; }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

  // ---- modification -------------------------------------------------------------------------
  void reserve(size_t n) {
    if (n > cap_) grow_to(n);
  }
  void clear() noexcept { size_ = 0; }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = uint32_t(n);
  }
  void assign(size_t n, int64_t value) {
    clear();
    resize(n, value);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    if constexpr (std::forward_iterator<It>) reserve(size_t(std::distance(first, last)));
    for (; first != last; ++first) push_back(int64_t(*first));
  }
  void push_back(int64_t v) {
    if (size_ == cap_) grow_to(size_t(cap_) * 2);
    data_[size_++] = v;
  }
  int64_t& emplace_back(int64_t v) {
    push_back(v);
    return back();
  }
  void pop_back() noexcept { --size_; }
  iterator insert(const_iterator pos, int64_t v) { return insert(pos, size_t(1), v); }
  iterator insert(const_iterator pos, size_t n, int64_t v) {
    const size_t at = open_gap(pos, n);
    std::fill_n(data_ + at, n, v);
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<int64_t> values) {
    return insert(pos, values.begin(), values.end());
  }
  template <std::forward_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    // Copied through a buffer first: [first, last) may point into this Shape.
    const Shape values(first, last);
    const size_t at = open_gap(pos, values.size());
    std::copy(values.begin(), values.end(), data_ + at);
    return data_ + at;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t at = size_t(first - data_), n = size_t(last - first);
    std::copy(data_ + at + n, data_ + size_, data_ + at);
    size_ -= uint32_t(n);
    return data_ + at;
  }
  void swap(Shape& o) noexcept {
    Shape t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }

  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator<(const Shape& a, const Shape& b) noexcept {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const noexcept { return data_ != inline_; }
  size_t checked(size_t i) const {
    if (i >= size_) throw std::out_of_range("rt::Shape::at: index out of range");
    return i;
  }
  void grow_to(size_t n) {
    n = std::max(n, size_t(kInline) * 2);
    auto* p = new int64_t[n];
    std::copy(data_, data_ + size_, p);
    release();
    data_ = p;
    cap_ = uint32_t(n);
  }
  // Makes room for n elements at pos; returns pos's index.
  size_t open_gap(const_iterator pos, size_t n) {
    const size_t at = size_t(pos - data_);
    reserve(size_t(size_) + n);
    std::copy_backward(data_ + at, data_ + size_, data_ + size_ + n);
    size_ += uint32_t(n);
    return at;
  }
  void release() noexcept {
    if (on_heap()) delete[] data_;
    data_ = inline_;
    cap_ = kInline;
  }
  // Takes o's elements (stealing a heap array) and leaves o empty and inline.
  void take(Shape& o) noexcept {
    size_ = o.size_;
    if (o.on_heap()) {
      data_ = o.data_;
      cap_ = o.cap_;
      o.data_ = o.inline_;
      o.cap_ = kInline;
    } else {
      std::copy(o.inline_, o.inline_ + o.size_, inline_);
    }
    o.size_ = 0;
  }

  int64_t* data_ = inline_;
  uint32_t size_ = 0;
  uint32_t cap_ = kInline;
  int64_t inline_[kInline];
};

inline void swap(Shape& a, Shape& b) noexcept { a.swap(b); }

}  // namespace rt

RT_API_END
