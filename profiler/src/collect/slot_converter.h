// Turns drained thread-buffer slots into a session's records (off the recording threads).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <unordered_map>

#include "collect/clock.h"
#include "collect/thread_buffer.h"
#include "rt/prof/events.h"

namespace rt::prof::collect {

class SlotConverter {
 public:
  SlotConverter(SessionData& out, const TickMap& clock) : out_(out), clock_(clock) {}

  // Adds or refreshes b's ThreadRecord (`name`: b.thread_name()); call before convert() for b.
  void thread(const ThreadBuffer& b, const std::string& name);
  void convert(const ThreadBuffer& b, const Segment& segment, const Slot& slot);
  // Forgets every cached id: call after replacing `out` (its records and StringTable).
  void reset();

 private:
  StringId name_id(const char* stable);
  StringId module_id(uint32_t module);
  void shape_texts(const Segment& segment, const Slot& slot, OpRecord& op);

  SessionData& out_;
  const TickMap& clock_;
  std::unordered_map<const char*, StringId> names_;  // interned by pointer: names are stable
  std::unordered_map<uint32_t, StringId> modules_;
  std::unordered_map<uint64_t, size_t> threads_;     // thread id -> index in out_.threads
  // Shape words (their bytes, then the truncation flag) -> the interned shape and dtype texts: a training
  // loop records the same few hundred shape lists every step, and formatting them was most of a drain.
  struct BytesHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::pair<StringId, StringId>, BytesHash, std::equal_to<>> shape_texts_;
  std::string key_, shapes_, dtypes_;
};

// "[[64, 784], [784, 10]]" and "[float32, float32]" from an op's shape words.
void format_shape_words(const int64_t* words, uint32_t count, bool truncated, std::string& shapes,
                        std::string& dtypes);

}  // namespace rt::prof::collect
