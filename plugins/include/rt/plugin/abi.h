/* rt/plugin/abi.h — the C boundary between RustyTorch++ and its plugins: ops, trace importers and exporters.
 *
 * A plugin is a shared library with a plugin.json beside it (docs/plugins.md). It exports one function,
 * rt_plugin_entry, that returns a static table; everything else crosses through tables like it:
 *
 *   static RtStatus my_initialize(const RtHostApi* host, RtError* error) {
 *     if (host->abi_minor < 1) return rt_error_set(error, RT_STATUS_UNSUPPORTED, "needs host ABI 1.1");
 *     return RT_STATUS_OK;
 *   }
 *   static const RtPluginInfo kInfo = {
 *       .struct_size = sizeof(RtPluginInfo), .abi_major = RT_PLUGIN_ABI_MAJOR, .abi_minor = RT_PLUGIN_ABI_MINOR,
 *       .id = "org.example.my-plugin", .version = "1.0.0", .initialize = my_initialize,
 *       .importer = &kMyImporter};
 *   RT_PLUGIN_EXPORT const RtPluginInfo* rt_plugin_entry(void) { return &kInfo; }
 *
 * C++ authors use rt/plugin/sdk.h on top of this: a TORCH_LIBRARY-like registration that builds these tables
 * and turns every exception into an RtStatus at the boundary.
 *
 * Compatibility promise (docs/plugins.md, "ABI"):
 *  - RT_PLUGIN_ABI_MAJOR changes when anything here changes incompatibly; the host refuses a plugin whose major
 *    differs from its own, naming both versions.
 *  - RT_PLUGIN_ABI_MINOR grows when fields are appended to a table or values to an enum. A plugin built against
 *    a newer minor than the host's is refused (it may use what the host lacks); an older one is served.
 *  - Every table starts with struct_size. A reader never touches a field past the size the writer declared:
 *    RT_ABI_HAS_FIELD(table, field) is how the host, and a plugin reading the host's tables, checks.
 *  - Nothing but plain C crosses: no C++ types, no exceptions (a plugin that lets one escape is a bug the SDK
 *    prevents), no ownership of memory the other side allocated unless a function below says so.
 *  - Strings are NUL-terminated UTF-8. Pointers in RtPluginInfo and the tables it reaches must stay valid while
 *    the library is loaded; op libraries are never unloaded while the process lives.
 */
#ifndef RT_PLUGIN_ABI_H
#define RT_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RT_PLUGIN_ABI_MAJOR 1
#define RT_PLUGIN_ABI_MINOR 0
#define RT_PLUGIN_ENTRY_SYMBOL "rt_plugin_entry"

#if defined(_WIN32)
#define RT_PLUGIN_EXPORT __declspec(dllexport)
#else
#define RT_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* True when `table` (a pointer to a struct starting with struct_size) is large enough to hold `field`. */
#define RT_ABI_HAS_FIELD(table, field) \
  ((table)->struct_size >= offsetof(__typeof__(*(table)), field) + sizeof((table)->field))

/* ---- status and errors ------------------------------------------------------------------------------------ */

typedef enum RtStatus {
  RT_STATUS_OK = 0,
  RT_STATUS_ERROR = 1,            /* anything else; the message says what */
  RT_STATUS_INVALID_ARGUMENT = 2, /* bad input: a shape, a dtype, a malformed file */
  RT_STATUS_UNSUPPORTED = 3,      /* a device, dtype or feature this plugin does not handle */
  RT_STATUS_OUT_OF_MEMORY = 4
} RtStatus;

/* Where a failing call writes its message. The caller owns it; the callee writes at most
 * sizeof(message) bytes, NUL included (rt_error_set truncates). */
typedef struct RtError {
  char message[1024];
} RtError;

/* Fills `error` (may be NULL) and returns `status`: `return rt_error_set(error, RT_STATUS_INVALID_ARGUMENT, "...")`. */
static inline RtStatus rt_error_set(RtError* error, RtStatus status, const char* message) {
  if (error) {
    size_t i = 0;
    if (message)
      for (; message[i] != '\0' && i + 1 < sizeof(error->message); ++i) error->message[i] = message[i];
    error->message[i] = '\0';
  }
  return status;
}

/* ---- tensors (ops) ---------------------------------------------------------------------------------------- */

/* Values fixed by this ABI; the host maps them to its own types. */
typedef enum RtDType {
  RT_DTYPE_BOOL = 0,
  RT_DTYPE_UINT8 = 1,
  RT_DTYPE_INT32 = 2,
  RT_DTYPE_INT64 = 3,
  RT_DTYPE_FLOAT16 = 4,
  RT_DTYPE_BFLOAT16 = 5,
  RT_DTYPE_FLOAT32 = 6,
  RT_DTYPE_FLOAT64 = 7
} RtDType;

typedef enum RtDeviceType { RT_DEVICE_CPU = 0, RT_DEVICE_CUDA = 1 } RtDeviceType;
#define RT_DEVICE_TYPE_COUNT 2

typedef struct RtDevice {
  int32_t type;  /* RtDeviceType */
  int32_t index; /* 0 on the CPU */
} RtDevice;

/* A tensor the host owns. A handle passed to a kernel is borrowed for the call; one the host hands out
 * (tensor_empty, tensor_contiguous) is the plugin's until it gives it back with tensor_release or returns it
 * as an op result. */
typedef struct RtTensor RtTensor;

/* ---- trace data (importers and exporters) ----------------------------------------------------------------- */

/* One timed range on one thread: an op, a function of a sampled stack, a user range. Ranges of a thread nest
 * by time (a child lies within its parent); depth is 0 for a range with no parent. */
typedef struct RtTraceSlice {
  uint32_t struct_size;
  uint64_t thread;         /* any id, unique within the trace */
  const char* thread_name; /* may be empty */
  const char* name;
  const char* category;    /* "op", "backward", "user", "sample", ...; may be empty */
  int64_t start_ns;        /* from any origin, the same for the whole trace */
  int64_t end_ns;
  int32_t depth;           /* an exporter gets it filled in; an importer may leave it 0 */
} RtTraceSlice;

/* What an importer writes into: the host builds a profiler session from it. Each call returns RT_STATUS_OK,
 * or a failure the importer must pass on (the host refused the value, or was asked to stop). */
typedef struct RtTraceSink {
  uint32_t struct_size;
  void* context; /* the host's; passed back on every call */
  RtStatus (*set_metadata)(void* context, const char* key, const char* value);
  RtStatus (*add_slice)(void* context, const RtTraceSlice* slice);
} RtTraceSink;

/* What an exporter reads from: the host walks a session's ranges, thread by thread, each thread's in start
 * order (parents before their children). `visit` returning anything but RT_STATUS_OK stops the walk, and
 * for_each_slice returns that status. */
typedef RtStatus (*RtTraceSliceVisitor)(void* visitor_context, const RtTraceSlice* slice);
typedef struct RtTraceSource {
  uint32_t struct_size;
  void* context;
  const char* (*metadata)(void* context, const char* key); /* NULL when absent */
  RtStatus (*for_each_slice)(void* context, RtTraceSliceVisitor visit, void* visitor_context);
} RtTraceSource;

typedef struct RtTraceImporter {
  uint32_t struct_size;
  const char* format;            /* "folded-stacks": what --format and the manifest's "formats" name */
  const char* const* extensions; /* {".folded", NULL}: used only when detect cannot tell */
  /* How sure the importer is, 0 to 100, that a file starting with these bytes is its format (at most the
   * first 64 KiB; `size` may be smaller than the file). Must not fail. */
  int32_t (*detect)(const uint8_t* head, size_t size);
  /* Parses `data` (the whole file) into `sink`. Hostile input gets RT_STATUS_INVALID_ARGUMENT and a message
   * naming the line or offset; the host runs importers in a separate process, but they must not crash. */
  RtStatus (*import_trace)(const uint8_t* data, size_t size, const RtTraceSink* sink, RtError* error);
} RtTraceImporter;

/* An exporter returns the file's bytes through `write`, in as many calls as it likes. */
typedef RtStatus (*RtByteWriter)(void* writer_context, const void* data, size_t size);
typedef struct RtTraceExporter {
  uint32_t struct_size;
  const char* format;
  const char* extension; /* ".folded" */
  RtStatus (*export_trace)(const RtTraceSource* source, RtByteWriter write, void* writer_context, RtError* error);
} RtTraceExporter;

/* ---- ops -------------------------------------------------------------------------------------------------- */

typedef enum RtValueKind {
  RT_VALUE_NONE = 0, /* an optional argument left out (`Tensor? b = None`), or no gradient */
  RT_VALUE_TENSOR = 1,
  RT_VALUE_FLOAT = 2,
  RT_VALUE_INT = 3,
  RT_VALUE_BOOL = 4
} RtValueKind;

typedef struct RtValue {
  int32_t kind; /* RtValueKind */
  union {
    RtTensor* tensor;
    double f;
    int64_t i;
    int32_t b;
  } as;
} RtValue;

/* One call of an op's kernel. The host has checked the arguments against the schema and chosen the kernel
 * by the tensors' device; the kernel writes every result into returns[] (tensors it allocated with
 * host->tensor_empty, or, when the schema says a result aliases an argument, that argument). */
typedef struct RtOpCall {
  uint32_t struct_size;
  const struct RtHostApi* host;
  const RtValue* args; /* in schema order */
  size_t num_args;
  RtValue* returns;
  size_t num_returns;
  RtDevice device;
  void* cuda_stream; /* cudaStream_t to launch on when device is CUDA; NULL on the CPU */
  void* user_data;   /* RtOpDef.user_data */
} RtOpCall;

/* One call of an op's backward: gradients of the results in, gradients of the arguments out. The host saved
 * the forward's arguments and results for it. */
typedef struct RtBackwardCall {
  uint32_t struct_size;
  const struct RtHostApi* host;
  const RtValue* args;    /* the forward's arguments */
  size_t num_args;
  const RtValue* returns; /* the forward's results */
  size_t num_returns;
  RtTensor* const* grad_returns; /* one per result, never NULL for a tensor result (zeros when none arrived) */
  const int32_t* needs_grad;     /* one per argument: nonzero where a gradient is wanted */
  RtTensor** grad_args;          /* one per argument: set those that need one (a tensor from tensor_empty) */
  RtDevice device;
  void* cuda_stream;
  void* user_data;
} RtBackwardCall;

typedef RtStatus (*RtKernelFn)(const RtOpCall* call, RtError* error);
typedef RtStatus (*RtBackwardFn)(const RtBackwardCall* call, RtError* error);

/* What autocast does to an op's floating tensor arguments inside an autocast region (PyTorch's op lists). */
typedef enum RtAutocastPolicy {
  RT_AUTOCAST_NONE = 0,            /* run as called */
  RT_AUTOCAST_LOWER_PRECISION = 1, /* cast to the region's dtype (float16 / bfloat16), like matmul */
  RT_AUTOCAST_FP32 = 2,            /* cast to float32, like softmax */
  RT_AUTOCAST_PROMOTE = 3          /* cast to the widest floating type among them, like cat */
} RtAutocastPolicy;

typedef struct RtOpDef {
  uint32_t struct_size;
  /* "fused_bias_gelu(Tensor x, Tensor b) -> Tensor": PyTorch's schema language. Argument types Tensor,
   * Tensor?, float, int, bool (defaults allowed); `Tensor(a!)` marks an argument the op writes, `Tensor(a)`
   * a result aliasing it. Results: Tensor, or (Tensor, Tensor, ...). */
  const char* schema;
  const char* doc; /* one paragraph: what Python's help() shows; may be NULL */
  RtKernelFn kernels[RT_DEVICE_TYPE_COUNT];    /* by RtDeviceType; NULL where not supported */
  RtBackwardFn backward[RT_DEVICE_TYPE_COUNT]; /* NULL everywhere: not differentiable (the host says so
                                                  when a gradient would be needed) */
  int32_t autocast;                             /* RtAutocastPolicy */
  void* user_data;
} RtOpDef;

typedef struct RtOpLibrary {
  uint32_t struct_size;
  const char* ns; /* "rtx": Python's rt.ops.rtx.<op>; lowercase letters, digits and '_' */
  const RtOpDef* ops;
  size_t num_ops;
} RtOpLibrary;

/* ---- the host ---------------------------------------------------------------------------------------------- */

typedef enum RtLogLevel { RT_LOG_DEBUG = 0, RT_LOG_INFO = 1, RT_LOG_WARNING = 2, RT_LOG_ERROR = 3 } RtLogLevel;

/* What the host offers, passed to initialize and to every kernel. Check abi_minor (or RT_ABI_HAS_FIELD)
 * before calling anything a later minor added. */
typedef struct RtHostApi {
  uint32_t struct_size;
  uint16_t abi_major;
  uint16_t abi_minor;
  const char* host_version; /* "0.1.0" */
  void (*log)(int32_t level, const char* plugin_id, const char* message);

  /* Tensors. sizes/strides (in elements) point into the tensor and live as long as the handle. */
  int64_t (*tensor_dim)(const RtTensor* t);
  const int64_t* (*tensor_sizes)(const RtTensor* t);
  const int64_t* (*tensor_strides)(const RtTensor* t);
  int64_t (*tensor_numel)(const RtTensor* t);
  int32_t (*tensor_dtype)(const RtTensor* t); /* RtDType */
  RtDevice (*tensor_device)(const RtTensor* t);
  void* (*tensor_data)(const RtTensor* t); /* the first element (storage offset applied) */
  /* A new contiguous tensor, uninitialised. */
  RtStatus (*tensor_empty)(int64_t dim, const int64_t* sizes, int32_t dtype, RtDevice device, RtTensor** out,
                           RtError* error);
  /* `t` itself when contiguous, otherwise a contiguous copy; either way a new handle to release. */
  RtStatus (*tensor_contiguous)(const RtTensor* t, RtTensor** out, RtError* error);
  void (*tensor_release)(RtTensor* t);
} RtHostApi;

/* ---- the plugin --------------------------------------------------------------------------------------------- */

struct RtPanelPlugin; /* the studio's panel SDK (rt/plugin/panel_sdk.h): C++, checked by exact SDK version */

typedef struct RtPluginInfo {
  uint32_t struct_size;
  uint16_t abi_major; /* RT_PLUGIN_ABI_MAJOR and _MINOR as the plugin was built */
  uint16_t abi_minor;
  const char* id;      /* must equal plugin.json's "id" */
  const char* version; /* must equal plugin.json's "version" */

  /* Lifecycle, in Qt Creator's order (docs/plugins.md). Each may be NULL. initialize runs in dependency order
   * (a plugin after those it depends on); a failure disables the plugin and its dependents, with the message
   * shown. extensions_initialized runs in reverse order once every plugin initialized; delayed_initialize
   * after the studio's first frame (headless processes: right after extensions_initialized); shutdown in
   * reverse dependency order before the process exits. */
  RtStatus (*initialize)(const RtHostApi* host, RtError* error);
  void (*extensions_initialized)(void);
  RtStatus (*delayed_initialize)(RtError* error);
  void (*shutdown)(void);
  /* The plugin's own checks, run by `rtorch plugin check` after everything else; NULL: none. */
  RtStatus (*self_test)(const RtHostApi* host, RtError* error);

  /* What it provides; NULL for what it does not. Which of them it has must match the manifest's "kinds". */
  const RtOpLibrary* ops;
  const RtTraceImporter* importer;
  const RtTraceExporter* exporter;
  const struct RtPanelPlugin* panel;
} RtPluginInfo;

typedef const RtPluginInfo* (*RtPluginEntryFn)(void);

#ifdef __cplusplus
}
#endif

#endif /* RT_PLUGIN_ABI_H */
