#include "session/store_sink.h"

#include <fmt/format.h>

namespace rt::prof::session {

namespace {
uint64_t record_count(const SessionData& d) {
  return d.ops.size() + d.gpu.size() + d.collectives.size() + d.memory.size() + d.counters.size() + d.steps.size() +
         d.gradient_histograms.size();
}
}  // namespace

StoreSink::StoreSink(const std::string& path, std::string_view name,
                     const std::unordered_map<std::string, std::string>& metadata)
    : path_(path) {
  Store store = Store::open(path);
  writer_.emplace(store.begin_session(name, metadata));
  session_id_ = writer_->id();
}

void StoreSink::write(const SessionData& batch) noexcept {
  if (!first_error_.empty()) {
    lost_records_ += record_count(batch);
    return;
  }
  try {
    writer_->append(batch);
  } catch (const std::exception& e) {
    first_error_ = e.what();
    lost_records_ += record_count(batch);
  }
}

void StoreSink::finish() {
  if (!first_error_.empty())
    throw StoreError(fmt::format(
        "session {} in store {} is incomplete: writing it failed while recording ({}); {} records were not "
        "written. The Session still holds what keep_in_memory kept: save it with Store::save_session "
        "once the store is writable again",
        session_id_, path_, first_error_, lost_records_));
  writer_->finish();
}

}  // namespace rt::prof::session
