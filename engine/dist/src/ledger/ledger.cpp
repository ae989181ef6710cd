#include <fmt/core.h>

#include <algorithm>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "ledger_internal.h"
#include "rt/op_observer.h"

namespace rt::dist {

namespace {

struct Names {
  std::vector<std::string> text{""};
  std::unordered_map<std::string, uint32_t> ids{{"", 0}};
  uint32_t intern(const std::string& s) {
    auto [it, added] = ids.emplace(s, uint32_t(text.size()));
    if (added) text.push_back(s);
    return it->second;
  }
};

struct Ledger {
  std::mutex mutex;
  uint64_t last_id = 0;
  CollectiveRecord slots[kLedgerCapacity];
  Names groups, sites;
};

Ledger& ledger() {
  static Ledger* l = new Ledger;  // outlives static destructors that may still finish operations
  return *l;
}

thread_local uint32_t t_call_site = 0;

void report_to_profiler(const CollectiveRecord& r, std::string_view group, std::string_view site) noexcept {
  rt::CollectiveEvent e;
  e.op = r.op;
  e.group = group;
  e.call_site = site;
  e.seq = r.seq;
  e.point_to_point = r.point_to_point;
  e.peer = r.peer;
  e.dtype = r.dtype;
  e.ndim = r.ndim;
  e.sizes = r.sizes;
  e.numel = r.numel;
  e.bytes = r.numel * int64_t(rt::element_size(r.dtype));
  e.enqueue_ns = r.enqueue_ns;
  e.start_ns = r.start_ns;
  e.end_ns = r.end_ns;
  e.thread = r.thread;
  rt::report_collective(e);
}

}  // namespace

namespace detail {

uint64_t ledger_record(const LedgerEntry& e) {
  const uint32_t site = t_call_site;
  const uint64_t thread = rt::current_thread_id();
  const int64_t now = rt::now_ns();
  Ledger& l = ledger();
  std::lock_guard<std::mutex> lock(l.mutex);
  const uint64_t id = ++l.last_id;
  CollectiveRecord& r = l.slots[(id - 1) % kLedgerCapacity];
  r = CollectiveRecord{};
  r.id = id;
  r.seq = e.seq;
  r.group = e.group;
  r.site = site;
  r.op = e.op;
  r.point_to_point = e.point_to_point;
  r.peer = e.peer;
  r.numel = e.numel;
  r.shapes_hash = e.shapes_hash;
  r.enqueue_ns = now;
  r.start_ns = now;
  r.thread = thread;
  if (e.first && e.first->defined()) {
    r.dtype = e.first->dtype();
    const auto& sizes = e.first->sizes();
    r.ndim = uint8_t(std::min<size_t>(sizes.size(), 255));
    for (size_t i = 0; i < sizes.size() && i < 4; ++i) r.sizes[i] = sizes[i];
  }
  return id;
}

void ledger_start(uint64_t id) {
  if (id == 0) return;
  const int64_t now = rt::now_ns();
  Ledger& l = ledger();
  std::lock_guard<std::mutex> lock(l.mutex);
  CollectiveRecord& r = l.slots[(id - 1) % kLedgerCapacity];
  if (r.id == id && r.end_ns == 0) r.start_ns = now;
}

void ledger_finish(uint64_t id) {
  if (id == 0) return;
  const int64_t now = rt::now_ns();
  Ledger& l = ledger();
  CollectiveRecord done;
  std::string group, site;
  {
    std::lock_guard<std::mutex> lock(l.mutex);
    CollectiveRecord& r = l.slots[(id - 1) % kLedgerCapacity];
    if (r.id != id || r.end_ns != 0) return;
    r.end_ns = now;
    if (rt::event_recorder() == nullptr) return;
    done = r;
    try {  // finish runs in destructors (gloo's worker): out of memory loses the profiler's record, nothing else
      group = l.groups.text.at(r.group);
      site = l.sites.text.at(r.site);
    } catch (...) {
      return;
    }
  }
  report_to_profiler(done, group, site);
}

uint32_t ledger_group_id(const std::string& name) {
  Ledger& l = ledger();
  std::lock_guard<std::mutex> lock(l.mutex);
  return l.groups.intern(name);
}

uint64_t hash_shape(uint64_t h, const Tensor& t) {
  auto mix = [&](uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
  if (!t.defined()) {
    mix(0xdeadull);
    return h;
  }
  mix(uint64_t(t.dtype()) + 1);
  mix(t.sizes().size());
  for (int64_t s : t.sizes()) mix(uint64_t(s));
  return h;
}

}  // namespace detail

std::vector<CollectiveRecord> ledger_snapshot() {
  Ledger& l = ledger();
  std::lock_guard<std::mutex> lock(l.mutex);
  std::vector<CollectiveRecord> out;
  const uint64_t first = l.last_id > kLedgerCapacity ? l.last_id - kLedgerCapacity + 1 : 1;
  out.reserve(size_t(l.last_id - first + 1));
  for (uint64_t id = first; id <= l.last_id; ++id) out.push_back(l.slots[(id - 1) % kLedgerCapacity]);
  return out;
}

std::string ledger_group_name(uint32_t group) {
  Ledger& l = ledger();
  std::lock_guard<std::mutex> lock(l.mutex);
  return group < l.groups.text.size() ? l.groups.text[group] : std::string("?");
}

std::string ledger_site(uint32_t site) {
  Ledger& l = ledger();
  std::lock_guard<std::mutex> lock(l.mutex);
  return site < l.sites.text.size() ? l.sites.text[site] : std::string();
}

uint32_t intern_call_site(const std::string& site) {
  Ledger& l = ledger();
  std::lock_guard<std::mutex> lock(l.mutex);
  return l.sites.intern(site);
}

CallSiteScope::CallSiteScope(uint32_t site) : saved_(t_call_site) { t_call_site = site; }
CallSiteScope::~CallSiteScope() { t_call_site = saved_; }

std::string describe_tensor(const CollectiveRecord& r) {
  if (std::string_view(r.op) == "barrier") return "";
  std::string shape = "[";
  for (int i = 0; i < r.ndim && i < 4; ++i) shape += (i ? ", " : "") + std::to_string(r.sizes[i]);
  if (r.ndim > 4) shape += ", ...";
  shape += "]";
  return fmt::format("{} {}", shape, dtype_name(r.dtype));
}

std::string describe_record(const CollectiveRecord& r) {
  std::string args = describe_tensor(r);
  if (r.peer >= 0) {
    const char* role = r.point_to_point ? (std::string_view(r.op) == "send" ? "dst" : "src") : "root";
    args += fmt::format("{}{} {}", args.empty() ? "" : ", ", role, r.peer);
  }
  const std::string site = ledger_site(r.site);
  return fmt::format("{}({}){}{}, sequence {} in group '{}'", r.op, args, site.empty() ? "" : " at ", site,
                     r.seq, ledger_group_name(r.group));
}

}  // namespace rt::dist
