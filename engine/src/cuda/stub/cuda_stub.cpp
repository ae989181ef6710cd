// rt/cuda.h and the engine's CUDA backend interface in a build without CUDA (RT_CUDA=OFF or no
// toolkit): queries answer "nothing here", and everything that needs a device throws
// DeviceError saying how to get a build with CUDA.
#include "cuda/backend.h"
#include "rt/cuda.h"
#include "rt/error.h"

namespace rt::cuda {
namespace {
const char* kNotBuilt =
    "CUDA support was not built into this rustytorch: install the CUDA toolkit in /usr/local/cuda and "
    "reconfigure with -DRT_CUDA=ON (or AUTO)";

[[noreturn]] void not_built(const char* what) { throw DeviceError(std::string(what) + ": " + kNotBuilt); }
}  // namespace

bool is_built() { return false; }
int device_count() { return 0; }
bool is_available() { return false; }
std::string unavailable_reason() { return kNotBuilt; }
std::string version_string() { return "not built"; }
DeviceProperties device_properties(int) { not_built("device_properties"); }
int current_device() { not_built("current_device"); }
void set_device(int) { not_built("set_device"); }
void synchronize(int) { not_built("synchronize"); }
size_t memory_allocated(int) { return 0; }
size_t max_memory_allocated(int) { return 0; }
size_t memory_reserved(int) { return 0; }
size_t max_memory_reserved(int) { return 0; }
void reset_peak_memory_stats(int) {}
MemoryStats memory_stats(int) { return {}; }
std::pair<size_t, size_t> mem_get_info(int) { not_built("mem_get_info"); }
void empty_cache() {}
void set_allow_tf32(bool) {}
bool allow_tf32() { return false; }

Stream Stream::create(int, int) { not_built("Stream.create"); }
Stream Stream::current(int) { not_built("Stream.current"); }
Stream Stream::default_stream(int) { not_built("Stream.default_stream"); }
// No Stream or Event can exist in this build (their factories throw); the members below are
// unreachable and throw all the same.
int Stream::priority() const { not_built("Stream.priority"); }
void Stream::synchronize() const { not_built("Stream.synchronize"); }
bool Stream::query() const { not_built("Stream.query"); }
void Stream::wait_event(const Event&) const { not_built("Stream.wait_event"); }
void Stream::wait_stream(const Stream&) const { not_built("Stream.wait_stream"); }
void set_current_stream(const Stream&) { not_built("set_current_stream"); }
StreamGuard::StreamGuard(const Stream&) { not_built("StreamGuard"); }
StreamGuard::~StreamGuard() = default;
void record_stream(const Tensor&, const Stream&) { not_built("record_stream"); }

Tensor pin_memory(const Tensor&) { not_built("pin_memory"); }
bool is_pinned(const Tensor&) { return false; }

Event::Event(bool, bool) { not_built("Event"); }
Event::~Event() = default;
Event::Event(Event&&) noexcept = default;
Event& Event::operator=(Event&&) noexcept = default;
void Event::record() { not_built("Event.record"); }
void Event::record(const Stream&) { not_built("Event.record"); }
void Event::wait(const Stream&) const { not_built("Event.wait"); }
void Event::synchronize() const { not_built("Event.synchronize"); }
bool Event::query() const { not_built("Event.query"); }
float Event::elapsed_ms(const Event&) const { not_built("Event.elapsed_ms"); }

namespace detail {
Allocator* device_allocator(int index) { not_built(("device cuda:" + std::to_string(index)).c_str()); }
void copy(const Tensor&, const Tensor&, bool) { not_built("copy to or from a CUDA device"); }
Allocator* pinned_allocator() { not_built("pinned memory"); }
void record_pinned_use(const Tensor&, Device, void*) { not_built("pinned memory"); }
void* stream(Device) { not_built("stream"); }
void set_stream(Device, void*) { not_built("set_stream"); }
void stream_wait(Device, void*, void*) { not_built("stream_wait"); }
}  // namespace detail

}  // namespace rt::cuda
