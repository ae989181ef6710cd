// rt/plugin/sdk.h — writing an op plugin in C++: a TORCH_LIBRARY-like registration over abi.h's C tables.
// Header-only, C++20; includes abi.h and the standard library only. docs/plugins.md walks through a plugin.
//
//   #include "rt/plugin/sdk.h"
//   using rt::plugin::sdk::Tensor;
//
//   // A kernel takes its arguments as the schema declares them: Tensor -> const Tensor&, Tensor? -> const Tensor*
//   // (nullptr for None), float -> double, int -> int64_t, bool -> bool; it may take a const KernelContext& first
//   // (the host, the device, the CUDA stream to launch on). It returns a Tensor, a std::tuple of them, or void.
//   Tensor scaled_add(const Tensor& x, const Tensor& y, double alpha) {
//     RT_PLUGIN_CHECK(x.dtype() == RT_DTYPE_FLOAT32, "scaled_add: x must be float32, got ", x.dtype_name());
//     RT_PLUGIN_CHECK(x.same_shape(y), "scaled_add: x and y must have one shape");
//     Tensor xc = x.contiguous(), yc = y.contiguous(), out = Tensor::empty_like(xc);
//     const float *px = xc.data<float>(), *py = yc.data<float>();
//     float* po = out.data<float>();
//     for (int64_t i = 0; i < out.numel(); ++i) po[i] = px[i] + float(alpha) * py[i];
//     return out;
//   }
//   // A backward reads the forward's arguments and results and the results' gradients, and sets the gradient of
//   // each argument that needs one.
//   void scaled_add_backward(rt::plugin::sdk::BackwardContext& ctx) {
//     const Tensor& g = ctx.grad_output(0);                   // zeros when the result got no gradient
//     if (ctx.needs_grad(0)) ctx.set_grad(0, times(g, 1.0));  // times(): your own loop, like scaled_add's,
//     if (ctx.needs_grad(1)) ctx.set_grad(1, times(g, ctx.arg_float(2)));  // returning a Tensor::empty_like
//   }
//
//   RT_PLUGIN_OPS(myops, m) {          // Python: rt.ops.myops.scaled_add(x, y, alpha=2.0)
//     m.def("scaled_add(Tensor x, Tensor y, float alpha=1.0) -> Tensor", "x + alpha * y.")
//         .impl_cpu(&scaled_add)
//         .backward_cpu(&scaled_add_backward)
//         .autocast(RT_AUTOCAST_FP32);
//   }
//   RT_PLUGIN_ENTRY(info) {            // the rt_plugin_entry the host looks for; fields as plugin.json says
//     info.id = "org.example.myops";
//     info.version = "1.0.0";
//     info.self_test = &rt::plugin::sdk::guarded_self_test<&my_self_test>;  // void my_self_test(const RtHostApi*)
//   }
//
// Contracts
//  - No exception leaves the plugin: every kernel, backward, initialize and self test runs inside a catch that
//    turns sdk::Error into its status, std::bad_alloc into RT_STATUS_OUT_OF_MEMORY and anything else into
//    RT_STATUS_ERROR, each with its message. Throw sdk::Error (or use RT_PLUGIN_CHECK) for bad input.
//  - Tensor is a move-only view over a host handle. Arguments, saved tensors and gradients are borrowed (the
//    host frees them); Tensor::empty and contiguous() make owned ones, released when the Tensor dies unless it is
//    returned as a result or set as a gradient (ownership goes to the host).
//  - A result the schema declares an alias ("-> Tensor(a)") is returned as the argument itself: return x.borrow().
//  - One RT_PLUGIN_OPS per plugin (abi.h's RtPluginInfo holds one op library); RT_PLUGIN_ENTRY once per plugin.
//  - The host checked every argument against the schema before a kernel runs; the SDK checks again that each
//    value's kind fits the C++ parameter and reports a mismatch as RT_STATUS_INVALID_ARGUMENT.
#pragma once
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "rt/plugin/abi.h"

namespace rt::plugin::sdk {

// ---- errors --------------------------------------------------------------------------------------------------

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, RtStatus status = RT_STATUS_INVALID_ARGUMENT)
      : std::runtime_error(message), status_(status) {}
  RtStatus status() const { return status_; }

 private:
  RtStatus status_;
};

namespace detail {
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace detail

// RT_PLUGIN_CHECK(cond, "message parts", ...): throws Error(RT_STATUS_INVALID_ARGUMENT) when cond is false.
#define RT_PLUGIN_CHECK(cond, ...) \
  do {                             \
    if (!(cond)) throw ::rt::plugin::sdk::Error(::rt::plugin::sdk::detail::concat(__VA_ARGS__)); \
  } while (0)

// Runs `f`, turning every exception into an RtStatus and `error`'s message.
template <typename F>
RtStatus guarded_call(RtError* error, F&& f) noexcept {
  try {
    f();
    return RT_STATUS_OK;
  } catch (const Error& e) {
    return rt_error_set(error, e.status(), e.what());
  } catch (const std::bad_alloc&) {
    return rt_error_set(error, RT_STATUS_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return rt_error_set(error, RT_STATUS_ERROR, e.what());
  } catch (...) {
    return rt_error_set(error, RT_STATUS_ERROR, "unknown exception");
  }
}

inline const char* dtype_name(int32_t d) {
  switch (d) {
    case RT_DTYPE_BOOL: return "bool";
    case RT_DTYPE_UINT8: return "uint8";
    case RT_DTYPE_INT32: return "int32";
    case RT_DTYPE_INT64: return "int64";
    case RT_DTYPE_FLOAT16: return "float16";
    case RT_DTYPE_BFLOAT16: return "bfloat16";
    case RT_DTYPE_FLOAT32: return "float32";
    case RT_DTYPE_FLOAT64: return "float64";
    default: return "unknown dtype";
  }
}

template <typename T> constexpr int32_t dtype_of() {
  if constexpr (std::is_same_v<T, float>) return RT_DTYPE_FLOAT32;
  else if constexpr (std::is_same_v<T, double>) return RT_DTYPE_FLOAT64;
  else if constexpr (std::is_same_v<T, int32_t>) return RT_DTYPE_INT32;
  else if constexpr (std::is_same_v<T, int64_t>) return RT_DTYPE_INT64;
  else if constexpr (std::is_same_v<T, uint8_t>) return RT_DTYPE_UINT8;
  else if constexpr (std::is_same_v<T, bool>) return RT_DTYPE_BOOL;
  else static_assert(sizeof(T) == 0, "data<T>(): T must be float, double, int32_t, int64_t, uint8_t or bool");
}

// ---- tensors -------------------------------------------------------------------------------------------------

class Tensor {
 public:
  Tensor() = default;
  Tensor(const RtHostApi* host, RtTensor* handle, bool owned) : host_(host), handle_(handle), owned_(owned) {}
  ~Tensor() { reset(); }
  Tensor(Tensor&& o) noexcept : host_(o.host_), handle_(std::exchange(o.handle_, nullptr)), owned_(o.owned_) {}
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) {
      reset();
      host_ = o.host_;
      handle_ = std::exchange(o.handle_, nullptr);
      owned_ = o.owned_;
    }
    return *this;
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  // A new contiguous tensor, uninitialised.
  static Tensor empty(const RtHostApi* host, const std::vector<int64_t>& sizes, int32_t dtype, RtDevice device) {
    RtTensor* out = nullptr;
    RtError error;
    error.message[0] = '\0';
    const RtStatus s = host->tensor_empty(int64_t(sizes.size()), sizes.data(), dtype, device, &out, &error);
    if (s != RT_STATUS_OK) throw Error(error.message, s);
    return Tensor(host, out, true);
  }
  static Tensor empty_like(const Tensor& t) { return empty(t.host(), t.sizes(), t.dtype(), t.device()); }

  bool defined() const { return handle_ != nullptr; }
  const RtHostApi* host() const { return host_; }
  RtTensor* handle() const { return handle_; }
  bool owned() const { return owned_; }

  int64_t dim() const { return host_->tensor_dim(handle_); }
  std::vector<int64_t> sizes() const {
    const int64_t* s = host_->tensor_sizes(handle_);
    return std::vector<int64_t>(s, s + dim());
  }
  std::vector<int64_t> strides() const {
    const int64_t* s = host_->tensor_strides(handle_);
    return std::vector<int64_t>(s, s + dim());
  }
  int64_t size(int64_t d) const {
    const int64_t n = dim();
    if (d < 0) d += n;
    if (d < 0 || d >= n) throw Error(detail::concat("size(", d, "): the tensor has ", n, " dimensions"));
    return host_->tensor_sizes(handle_)[d];
  }
  int64_t numel() const { return host_->tensor_numel(handle_); }
  int32_t dtype() const { return host_->tensor_dtype(handle_); }
  const char* dtype_name() const { return sdk::dtype_name(dtype()); }
  RtDevice device() const { return host_->tensor_device(handle_); }
  bool is_cuda() const { return device().type == RT_DEVICE_CUDA; }
  bool same_shape(const Tensor& o) const { return sizes() == o.sizes(); }
  bool is_contiguous() const {
    const int64_t n = dim();
    const int64_t* s = host_->tensor_sizes(handle_);
    const int64_t* st = host_->tensor_strides(handle_);
    int64_t expected = 1;
    for (int64_t d = n - 1; d >= 0; --d) {
      if (s[d] != 1 && st[d] != expected) return false;
      expected *= s[d];
    }
    return true;
  }
  // The first element (storage offset applied); on CUDA a device address.
  void* data_ptr() const { return host_->tensor_data(handle_); }
  template <typename T> T* data() const {
    if (dtype() != dtype_of<T>())
      throw Error(detail::concat("data<", sdk::dtype_name(dtype_of<T>()), ">() on a ", dtype_name(), " tensor"));
    return static_cast<T*>(data_ptr());
  }

  // This tensor when contiguous (borrowed), otherwise a contiguous copy (owned).
  Tensor contiguous() const {
    if (is_contiguous()) return borrow();
    RtTensor* out = nullptr;
    RtError error;
    error.message[0] = '\0';
    const RtStatus s = host_->tensor_contiguous(handle_, &out, &error);
    if (s != RT_STATUS_OK) throw Error(error.message, s);
    return Tensor(host_, out, true);
  }
  // A non-owning view of the same handle: what an aliasing op returns for its argument.
  Tensor borrow() const { return Tensor(host_, handle_, false); }
  // Gives up ownership: the caller (or the host, for a returned result) releases the handle.
  RtTensor* release() { return std::exchange(handle_, nullptr); }

 private:
  void reset() {
    if (owned_ && handle_) host_->tensor_release(handle_);
    handle_ = nullptr;
  }
  const RtHostApi* host_ = nullptr;
  RtTensor* handle_ = nullptr;
  bool owned_ = false;
};

// ---- kernels and backwards -----------------------------------------------------------------------------------

struct KernelContext {
  const RtHostApi* host;
  RtDevice device;
  void* cuda_stream;  // cudaStream_t on CUDA; NULL on the CPU
};

class BackwardContext {
 public:
  explicit BackwardContext(const RtBackwardCall* call) : call_(call) {
    for (size_t i = 0; i < call->num_args; ++i)
      args_.emplace_back(call->args[i].kind == RT_VALUE_TENSOR ? Tensor(call->host, call->args[i].as.tensor, false)
                                                              : Tensor());
    for (size_t i = 0; i < call->num_returns; ++i)
      results_.emplace_back(call->host, call->returns[i].as.tensor, false);
    for (size_t i = 0; i < call->num_returns; ++i) grads_.emplace_back(call->host, call->grad_returns[i], false);
  }
  const RtHostApi* host() const { return call_->host; }
  RtDevice device() const { return call_->device; }
  void* cuda_stream() const { return call_->cuda_stream; }
  size_t num_args() const { return call_->num_args; }

  // The forward's argument `i` (undefined for a None Tensor?), its scalars, its results.
  const Tensor& arg(size_t i) const { return args_.at(i); }
  double arg_float(size_t i) const { return value(i, RT_VALUE_FLOAT, "float").as.f; }
  int64_t arg_int(size_t i) const { return value(i, RT_VALUE_INT, "int").as.i; }
  bool arg_bool(size_t i) const { return value(i, RT_VALUE_BOOL, "bool").as.b != 0; }
  const Tensor& result(size_t i) const { return results_.at(i); }
  // The gradient of result `i` (zeros when none arrived).
  const Tensor& grad_output(size_t i) const { return grads_.at(i); }
  bool needs_grad(size_t i) const { return i < call_->num_args && call_->needs_grad[i] != 0; }
  // The gradient of argument `i`: an owned tensor (from Tensor::empty), whose ownership goes to the host.
  void set_grad(size_t i, Tensor&& g) {
    if (i >= call_->num_args) throw Error(detail::concat("set_grad(", i, "): the op has ", call_->num_args, " arguments"));
    if (!g.owned()) throw Error(detail::concat("set_grad(", i, "): give a new tensor (Tensor::empty), not a borrowed one"));
    if (call_->grad_args[i]) call_->host->tensor_release(call_->grad_args[i]);
    call_->grad_args[i] = g.release();
  }

 private:
  const RtValue& value(size_t i, int32_t kind, const char* what) const {
    if (i >= call_->num_args || call_->args[i].kind != kind)
      throw Error(detail::concat("argument ", i, " is not a ", what));
    return call_->args[i];
  }
  const RtBackwardCall* call_;
  std::vector<Tensor> args_, results_, grads_;
};

namespace detail {

// Converts RtValue `v` to a kernel parameter of type P.
template <typename P>
decltype(auto) convert_arg(const RtOpCall* call, size_t i, std::vector<Tensor>& views) {
  const RtValue& v = call->args[i];
  using D = std::decay_t<P>;
  auto wrong = [&](const char* want) {
    return Error(concat("argument ", i + 1, " must be ", want, " (the kernel's parameter type), got value kind ", v.kind));
  };
  if constexpr (std::is_same_v<D, Tensor>) {
    if (v.kind != RT_VALUE_TENSOR) throw wrong("a Tensor");
    return static_cast<const Tensor&>(views[i]);
  } else if constexpr (std::is_same_v<D, const Tensor*>) {
    if (v.kind == RT_VALUE_NONE) return static_cast<const Tensor*>(nullptr);
    if (v.kind != RT_VALUE_TENSOR) throw wrong("a Tensor or None");
    return static_cast<const Tensor*>(&views[i]);
  } else if constexpr (std::is_same_v<D, double>) {
    if (v.kind == RT_VALUE_INT) return double(v.as.i);
    if (v.kind != RT_VALUE_FLOAT) throw wrong("a float");
    return v.as.f;
  } else if constexpr (std::is_same_v<D, int64_t>) {
    if (v.kind != RT_VALUE_INT) throw wrong("an int");
    return v.as.i;
  } else if constexpr (std::is_same_v<D, bool>) {
    if (v.kind != RT_VALUE_BOOL) throw wrong("a bool");
    return v.as.b != 0;
  } else {
    static_assert(sizeof(P) == 0,
                  "kernel parameters are const Tensor&, const Tensor* (Tensor?), double, int64_t or bool");
  }
}

inline void put_result(const RtOpCall* call, size_t r, Tensor&& t) {
  if (r >= call->num_returns)
    throw Error(concat("the kernel returns more results (", r + 1, ") than the schema declares (", call->num_returns, ")"),
                RT_STATUS_ERROR);
  if (!t.defined()) throw Error(concat("the kernel returned an undefined tensor as result ", r), RT_STATUS_ERROR);
  call->returns[r].kind = RT_VALUE_TENSOR;
  call->returns[r].as.tensor = t.release();
}

template <typename R>
void put_results(const RtOpCall* call, R&& result) {
  using D = std::decay_t<R>;
  if constexpr (std::is_same_v<D, Tensor>) {
    put_result(call, 0, std::move(result));
  } else {
    std::apply([&](auto&... ts) {
      size_t r = 0;
      (put_result(call, r++, std::move(ts)), ...);
    }, result);
  }
}

template <typename... Ps>
struct ParamList {};

template <typename Ret, typename... Ps, size_t... I>
void invoke_kernel(Ret (*fn)(Ps...), const RtOpCall* call, std::vector<Tensor>& views, std::index_sequence<I...>) {
  if constexpr (std::is_void_v<Ret>) fn(convert_arg<Ps>(call, I, views)...);
  else put_results(call, fn(convert_arg<Ps>(call, I, views)...));
}
template <typename Ret, typename... Ps, size_t... I>
void invoke_kernel_ctx(Ret (*fn)(const KernelContext&, Ps...), const KernelContext& ctx, const RtOpCall* call,
                       std::vector<Tensor>& views, std::index_sequence<I...>) {
  if constexpr (std::is_void_v<Ret>) fn(ctx, convert_arg<Ps>(call, I, views)...);
  else put_results(call, fn(ctx, convert_arg<Ps>(call, I, views)...));
}

using KernelThunk = std::function<void(const RtOpCall*)>;
using BackwardThunk = void (*)(BackwardContext&);

inline std::vector<Tensor> argument_views(const RtOpCall* call) {
  std::vector<Tensor> views;
  views.reserve(call->num_args);
  for (size_t i = 0; i < call->num_args; ++i)
    views.emplace_back(call->args[i].kind == RT_VALUE_TENSOR ? Tensor(call->host, call->args[i].as.tensor, false)
                                                            : Tensor());
  return views;
}

template <typename Ret, typename... Ps>
KernelThunk make_thunk(Ret (*fn)(Ps...)) {
  return [fn](const RtOpCall* call) {
    std::vector<Tensor> views = argument_views(call);
    if constexpr (sizeof...(Ps) > 0 &&
                  std::is_same_v<std::decay_t<std::tuple_element_t<0, std::tuple<Ps...>>>, KernelContext>) {
      return [&]<typename C, typename... Rest>(Ret (*f)(C, Rest...)) {
        if (call->num_args != sizeof...(Rest))
          throw Error(concat("the kernel takes ", sizeof...(Rest), " arguments, the call has ", call->num_args),
                      RT_STATUS_ERROR);
        const KernelContext ctx{call->host, call->device, call->cuda_stream};
        invoke_kernel_ctx(f, ctx, call, views, std::index_sequence_for<Rest...>{});
      }(fn);
    } else {
      if (call->num_args != sizeof...(Ps))
        throw Error(concat("the kernel takes ", sizeof...(Ps), " arguments, the call has ", call->num_args),
                    RT_STATUS_ERROR);
      invoke_kernel(fn, call, views, std::index_sequence_for<Ps...>{});
    }
  };
}

// What RtOpDef.user_data points at: the C++ functions behind the shared C trampolines.
struct OpEntry {
  KernelThunk kernels[RT_DEVICE_TYPE_COUNT];
  BackwardThunk backward[RT_DEVICE_TYPE_COUNT] = {nullptr, nullptr};
};

inline RtStatus kernel_trampoline(const RtOpCall* call, RtError* error) {
  return guarded_call(error, [&] {
    const auto* entry = static_cast<const OpEntry*>(call->user_data);
    const int32_t d = call->device.type;
    if (d < 0 || d >= RT_DEVICE_TYPE_COUNT || !entry->kernels[d])
      throw Error(concat("no kernel for device type ", d), RT_STATUS_UNSUPPORTED);
    for (size_t r = 0; r < call->num_returns; ++r) call->returns[r].kind = RT_VALUE_NONE;
    try {
      entry->kernels[d](call);
    } catch (...) {
      // Results the kernel produced before failing are ours to release: the host ignores returns[] on failure.
      for (size_t r = 0; r < call->num_returns; ++r) {
        RtValue& v = call->returns[r];
        bool is_arg = false;
        for (size_t i = 0; i < call->num_args; ++i)
          is_arg = is_arg || (call->args[i].kind == RT_VALUE_TENSOR && call->args[i].as.tensor == v.as.tensor);
        if (v.kind == RT_VALUE_TENSOR && v.as.tensor && !is_arg) call->host->tensor_release(v.as.tensor);
        v.kind = RT_VALUE_NONE;
        v.as.tensor = nullptr;
      }
      throw;
    }
  });
}

inline RtStatus backward_trampoline(const RtBackwardCall* call, RtError* error) {
  return guarded_call(error, [&] {
    const auto* entry = static_cast<const OpEntry*>(call->user_data);
    const int32_t d = call->device.type;
    if (d < 0 || d >= RT_DEVICE_TYPE_COUNT || !entry->backward[d])
      throw Error(concat("no backward for device type ", d), RT_STATUS_UNSUPPORTED);
    BackwardContext ctx(call);
    try {
      entry->backward[d](ctx);
    } catch (...) {
      // Gradients set before the failure are ours to release: the host ignores grad_args[] on failure.
      for (size_t i = 0; i < call->num_args; ++i)
        if (call->grad_args[i]) {
          call->host->tensor_release(call->grad_args[i]);
          call->grad_args[i] = nullptr;
        }
      throw;
    }
  });
}

}  // namespace detail

// ---- registration --------------------------------------------------------------------------------------------

class OpBuilder {
 public:
  OpBuilder(RtOpDef& def, detail::OpEntry& entry) : def_(def), entry_(entry) {}
  template <typename Ret, typename... Ps>
  OpBuilder& impl_cpu(Ret (*fn)(Ps...)) { return impl(RT_DEVICE_CPU, fn); }
  template <typename Ret, typename... Ps>
  OpBuilder& impl_cuda(Ret (*fn)(Ps...)) { return impl(RT_DEVICE_CUDA, fn); }
  OpBuilder& backward_cpu(void (*fn)(BackwardContext&)) { return backward(RT_DEVICE_CPU, fn); }
  OpBuilder& backward_cuda(void (*fn)(BackwardContext&)) { return backward(RT_DEVICE_CUDA, fn); }
  OpBuilder& autocast(RtAutocastPolicy policy) {
    def_.autocast = policy;
    return *this;
  }

 private:
  template <typename Ret, typename... Ps>
  OpBuilder& impl(RtDeviceType d, Ret (*fn)(Ps...)) {
    if (!fn) throw Error("impl: the kernel is NULL", RT_STATUS_ERROR);
    entry_.kernels[d] = detail::make_thunk(fn);
    def_.kernels[d] = &detail::kernel_trampoline;
    return *this;
  }
  OpBuilder& backward(RtDeviceType d, void (*fn)(BackwardContext&)) {
    if (!fn) throw Error("backward: the function is NULL", RT_STATUS_ERROR);
    entry_.backward[d] = fn;
    def_.backward[d] = &detail::backward_trampoline;
    return *this;
  }
  RtOpDef& def_;
  detail::OpEntry& entry_;
};

class Library {
 public:
  explicit Library(const char* ns) : ns_(ns) {}
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // Declares an op; chain impl_cpu / impl_cuda / backward_* / autocast on the result.
  OpBuilder def(const char* schema, const char* doc = nullptr) {
    if (finished_) throw Error("def after the library was handed to the host", RT_STATUS_ERROR);
    entries_.push_back(std::make_unique<detail::OpEntry>());
    RtOpDef d;
    std::memset(&d, 0, sizeof d);
    d.struct_size = sizeof(RtOpDef);
    d.schema = schema;
    d.doc = doc;
    d.autocast = RT_AUTOCAST_NONE;
    d.user_data = entries_.back().get();
    defs_.push_back(d);
    return OpBuilder(defs_.back(), *entries_.back());
  }
  const RtOpLibrary* table() {
    finished_ = true;
    table_.struct_size = sizeof(RtOpLibrary);
    table_.ns = ns_;
    table_.ops = defs_.data();
    table_.num_ops = defs_.size();
    return &table_;
  }

 private:
  const char* ns_;
  std::vector<RtOpDef> defs_;  // an OpBuilder is used up before the next def() grows this
  std::vector<std::unique_ptr<detail::OpEntry>> entries_;
  RtOpLibrary table_{};
  bool finished_ = false;
};

namespace detail {
// The plugin's one op library, and what went wrong defining it (reported by initialize).
struct PluginState {
  Library* library = nullptr;
  std::string definition_error;
  const RtHostApi* host = nullptr;
  RtStatus (*user_initialize)(const RtHostApi*, RtError*) = nullptr;
};
inline PluginState& plugin_state() {
  static PluginState s;
  return s;
}

struct LibraryRegistration {
  LibraryRegistration(const char* ns, void (*define)(Library&)) {
    PluginState& s = plugin_state();
    if (s.library) {
      s.definition_error = concat("RT_PLUGIN_OPS(", ns, ") is the second op library of this plugin; one is allowed");
      return;
    }
    s.library = new Library(ns);  // lives as long as the plugin: op libraries are never unloaded
    try {
      define(*s.library);
    } catch (const std::exception& e) {
      s.definition_error = concat("RT_PLUGIN_OPS(", ns, "): ", e.what());
    }
  }
};

inline RtStatus initialize_trampoline(const RtHostApi* host, RtError* error) {
  PluginState& s = plugin_state();
  s.host = host;
  if (!s.definition_error.empty()) return rt_error_set(error, RT_STATUS_ERROR, s.definition_error.c_str());
  return s.user_initialize ? s.user_initialize(host, error) : RT_STATUS_OK;
}

inline RtPluginInfo make_info(void (*fill)(RtPluginInfo&)) {
  RtPluginInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof(RtPluginInfo);
  info.abi_major = RT_PLUGIN_ABI_MAJOR;
  info.abi_minor = RT_PLUGIN_ABI_MINOR;
  fill(info);
  PluginState& s = plugin_state();
  s.user_initialize = info.initialize;
  info.initialize = &initialize_trampoline;
  if (s.library) info.ops = s.library->table();
  return info;
}
}  // namespace detail

// The host table initialize received (nullptr before).
inline const RtHostApi* host() { return detail::plugin_state().host; }

// A C++ self test for RtPluginInfo.self_test: throw (sdk::Error, RT_PLUGIN_CHECK) to fail.
template <void (*F)(const RtHostApi*)>
RtStatus guarded_self_test(const RtHostApi* host, RtError* error) {
  return guarded_call(error, [&] { F(host); });
}

}  // namespace rt::plugin::sdk

#define RT_PLUGIN_SDK_CONCAT_INNER_(a, b) a##b
#define RT_PLUGIN_SDK_CONCAT_(a, b) RT_PLUGIN_SDK_CONCAT_INNER_(a, b)

// RT_PLUGIN_OPS(ns, m) { m.def(...)...; }: the plugin's op library, namespace `ns` (rt.ops.<ns> in Python).
#define RT_PLUGIN_OPS(ns, m)                                                                        \
  static void RT_PLUGIN_SDK_CONCAT_(rt_plugin_sdk_define_, ns)(::rt::plugin::sdk::Library & m);   \
  static const ::rt::plugin::sdk::detail::LibraryRegistration RT_PLUGIN_SDK_CONCAT_(              \
      rt_plugin_sdk_registration_, ns)(#ns, &RT_PLUGIN_SDK_CONCAT_(rt_plugin_sdk_define_, ns));    \
  static void RT_PLUGIN_SDK_CONCAT_(rt_plugin_sdk_define_, ns)(::rt::plugin::sdk::Library & m)

// RT_PLUGIN_ENTRY(info) { info.id = ...; info.version = ...; ... }: defines rt_plugin_entry. The SDK fills
// struct_size, the ABI version and `ops`; initialize, if set, runs after the SDK's own checks.
#define RT_PLUGIN_ENTRY(info)                                                                     \
  static void rt_plugin_sdk_fill_info(RtPluginInfo& info);                                        \
  extern "C" RT_PLUGIN_EXPORT const RtPluginInfo* rt_plugin_entry(void) {                         \
    static const RtPluginInfo rt_plugin_sdk_info = ::rt::plugin::sdk::detail::make_info(&rt_plugin_sdk_fill_info); \
    return &rt_plugin_sdk_info;                                                                   \
  }                                                                                               \
  static void rt_plugin_sdk_fill_info(RtPluginInfo& info)
