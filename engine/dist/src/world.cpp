// The process's default group and the groups made from it (torch.distributed's world state).
#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "backend_spec.h"
#include "ledger/ledger_monitor.h"
#include "rt/dist/distributed.h"
#include "rt/dist/ledger.h"

namespace rt::dist {

namespace {

struct World {
  std::mutex mutex;
  GroupPtr default_group;
  std::shared_ptr<Store> store;  // the rendezvous store every group's keys live in
  int groups_made = 0;           // names new groups "group1", "group2", ... the same on every rank
  std::string backend_spec;
  std::unique_ptr<detail::LedgerMonitor> monitor;  // publishes and compares ledger summaries (rt/dist/ledger.h)
};

World& world() {
  static World* w = new World;  // outlives every static destructor that might still run collectives
  return *w;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

int parse_int(const std::string& text, const char* what, const char* source) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size() || v < 0 || v > 1 << 30) throw std::invalid_argument(text);
    return int(v);
  } catch (const std::exception&) {
    throw ValueError(fmt::format("{} from {} is '{}', which is not a non-negative integer", what, source, text));
  }
}

// The store and rank/world size an init_method names.
std::shared_ptr<Store> store_from_init_method(const InitOptions& o, int& rank, int& world_size) {
  std::string method = o.init_method.empty() ? "env://" : o.init_method;
  auto need_rank_and_size = [&](const char* kind) {
    if (rank < 0 || world_size < 1)
      throw ValueError(fmt::format("init_method '{}' needs rank and world_size (got rank {}, world_size {}); "
                                   "pass both, or use init_method=\"env://\" with RANK and WORLD_SIZE set",
                                   method, rank, world_size));
    (void)kind;
  };
  if (method.rfind("env://", 0) == 0) {
    const std::string addr = env_or_empty("MASTER_ADDR"), port = env_or_empty("MASTER_PORT");
    if (rank < 0) {
      const std::string r = env_or_empty("RANK");
      if (r.empty())
        throw ValueError("init_method \"env://\" needs RANK in the environment (or rank=...): start the ranks with "
                         "`rtorch launch --nproc-per-node N script.py`, which sets RANK, WORLD_SIZE, MASTER_ADDR "
                         "and MASTER_PORT");
      rank = parse_int(r, "RANK", "the environment");
    }
    if (world_size < 1) {
      const std::string w = env_or_empty("WORLD_SIZE");
      if (w.empty())
        throw ValueError("init_method \"env://\" needs WORLD_SIZE in the environment (or world_size=...): start the "
                         "ranks with `rtorch launch --nproc-per-node N script.py`");
      world_size = parse_int(w, "WORLD_SIZE", "the environment");
    }
    if (addr.empty() || port.empty())
      throw ValueError(fmt::format("init_method \"env://\" needs MASTER_ADDR and MASTER_PORT in the environment "
                                   "(MASTER_ADDR is '{}', MASTER_PORT is '{}'): set them to rank 0's address and a free "
                                   "port, e.g. MASTER_ADDR=127.0.0.1 MASTER_PORT=29500",
                                   addr, port));
    const int p = parse_int(port, "MASTER_PORT", "the environment");
    if (p > 65535) throw ValueError(fmt::format("MASTER_PORT {} is not a TCP port (0..65535)", p));
    return std::make_shared<TCPStore>(addr, uint16_t(p), world_size, rank == 0, o.timeout);
  }
  if (method.rfind("tcp://", 0) == 0) {
    need_rank_and_size("tcp");
    std::string hostport = method.substr(6);
    const size_t colon = hostport.rfind(':');
    if (colon == std::string::npos)
      throw ValueError(fmt::format("init_method '{}' is not tcp://HOST:PORT", method));
    std::string host = hostport.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    const int p = parse_int(hostport.substr(colon + 1), "the port", method.c_str());
    if (p > 65535) throw ValueError(fmt::format("init_method '{}': {} is not a TCP port", method, p));
    return std::make_shared<TCPStore>(host, uint16_t(p), world_size, rank == 0, o.timeout);
  }
  if (method.rfind("file://", 0) == 0) {
    need_rank_and_size("file");
    const std::string path = method.substr(7);
    if (path.empty()) throw ValueError(fmt::format("init_method '{}' names no file: use file:///path/to/file", method));
    return std::make_shared<FileStore>(path, world_size);
  }
  throw ValueError(fmt::format("init_method '{}' is not supported: use \"env://\", \"tcp://HOST:PORT\" or "
                               "\"file:///PATH\", or pass a store",
                               method));
}

}  // namespace

void init_process_group(const InitOptions& o) {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (w.default_group)
    throw DistError("init_process_group: the default process group is already initialized; call "
                    "destroy_process_group() first to start a new one");
  if (o.timeout.count() <= 0) throw ValueError("init_process_group: the timeout must be positive");
  const detail::BackendSpec spec = detail::parse_backend_spec(o.backend);  // a bad spec fails before rendezvous
  int rank = o.rank, world_size = o.world_size;
  std::shared_ptr<Store> store = o.store;
  if (spec.cpu == "mpi") {
    // MPI knows the job: rank and size come from mpirun / srun.
    auto probe = make_mpi_group({o.timeout, "mpi-probe", {}});
    if ((rank >= 0 && rank != probe->rank()) || (world_size >= 1 && world_size != probe->size()))
      throw ValueError(fmt::format("init_process_group(backend=\"mpi\"): rank {} / world_size {} were given but MPI "
                                   "says rank {} of {}; leave them out with the mpi backend",
                                   rank, world_size, probe->rank(), probe->size()));
    rank = probe->rank();
    world_size = probe->size();
    if (!store) store = std::make_shared<HashStore>();  // MPI needs none; local keys for monitored_barrier
  } else if (!store) {
    store = store_from_init_method(o, rank, world_size);
  } else if (rank < 0 || world_size < 1) {
    throw ValueError("init_process_group: with a store, pass rank and world_size too");
  }
  if (world_size < 1 || rank < 0 || rank >= world_size)
    throw ValueError(fmt::format("init_process_group: rank {} is not in 0..world_size-1 (world_size {})", rank,
                                 world_size));
  std::vector<int> ranks(static_cast<size_t>(world_size));
  for (int i = 0; i < world_size; ++i) ranks[size_t(i)] = i;
  const std::string name = o.group_name.empty() ? "default" : o.group_name;
  auto group = std::make_shared<Group>(name, std::move(ranks), rank, o.backend,
                                       std::make_shared<PrefixStore>("default_pg", store), o.timeout);
  // The ledger's summaries travel through the job's store; with mpi the store is this process's own.
  const char* ledger_env = std::getenv("RT_DISTRIBUTED_LEDGER");
  const bool ledger_on = !(ledger_env && std::string(ledger_env) == "0");
  if (world_size > 1 && spec.cpu != "mpi" && ledger_on) {
    // A TCPStore client of its own with a short timeout: when rank 0's server is gone, the monitor's
    // calls fail within seconds instead of retrying for the job's store timeout, so exit never waits long.
    std::shared_ptr<Store> monitor_store = group->store();
    if (auto* tcp = dynamic_cast<TCPStore*>(store.get())) {
      TCPStoreOptions client;
      client.port = tcp->port();
      client.is_master = false;
      client.wait_for_workers = false;
      client.timeout = std::chrono::seconds(2);
      monitor_store = std::make_shared<PrefixStore>("default_pg", std::make_shared<TCPStore>(tcp->host(), client));
    }
    w.monitor = std::make_unique<detail::LedgerMonitor>(monitor_store, rank, world_size,
                                                        detail::ledger_monitor_options_from_env());
    static bool stop_at_exit = [] {
      std::atexit([] { world().monitor.reset(); });  // before the store's sockets and the runtime go
      return true;
    }();
    (void)stop_at_exit;
  }
  w.store = std::move(store);
  w.backend_spec = group->backend();
  w.groups_made = 0;
  w.default_group = std::move(group);
}

void stop_ledger_monitor() {
  World& w = world();
  std::unique_ptr<detail::LedgerMonitor> monitor;
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    monitor = std::move(w.monitor);
  }
  monitor.reset();  // joins outside the lock
}

void destroy_process_group(const GroupPtr& group) {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (group && group != w.default_group) return;  // a sub-group goes when its last reference does
  w.monitor.reset();
  w.default_group.reset();
  w.store.reset();
  w.groups_made = 0;
}

bool is_initialized() {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mutex);
  return bool(w.default_group);
}

GroupPtr default_group() {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (!w.default_group)
    throw DistError("the default process group is not initialized: call init_process_group(backend=\"gloo\") first "
                    "(rtorch launch sets the environment it reads)");
  return w.default_group;
}

int get_rank(const GroupPtr& group) {
  if (!group) return default_group()->rank();
  return group->rank();
}

int get_world_size(const GroupPtr& group) {
  if (!group) return default_group()->size();
  return group->size();
}

std::string get_backend(const GroupPtr& group) { return (group ? group : default_group())->backend(); }

GroupPtr new_group(std::vector<int> ranks, Milliseconds timeout, std::string backend) {
  GroupPtr world_group = default_group();
  World& w = world();
  std::string name;
  std::shared_ptr<Store> store;
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    name = fmt::format("group{}", ++w.groups_made);
    store = w.store;
  }
  if (ranks.empty())
    for (int i = 0; i < world_group->size(); ++i) ranks.push_back(i);
  std::sort(ranks.begin(), ranks.end());
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0 || ranks[i] >= world_group->size())
      throw ValueError(fmt::format("new_group: rank {} is not a rank of the default group (0..{})", ranks[i],
                                   world_group->size() - 1));
    if (i > 0 && ranks[i] == ranks[i - 1])
      throw ValueError(fmt::format("new_group: rank {} is listed twice", ranks[i]));
  }
  const int me = world_group->rank();
  auto it = std::find(ranks.begin(), ranks.end(), me);
  if (it == ranks.end()) return nullptr;
  return std::make_shared<Group>(name, ranks, int(it - ranks.begin()), backend.empty() ? world_group->backend() : backend,
                                 std::make_shared<PrefixStore>(name, store),
                                 timeout.count() > 0 ? timeout : world_group->timeout());
}

}  // namespace rt::dist
