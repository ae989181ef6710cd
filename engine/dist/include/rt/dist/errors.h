// rt/dist/errors.h — what the distributed engine throws (PyTorch's torch.distributed names).
//
//   try { store.get("params"); }
//   catch (const rt::dist::DistStoreError& e) { std::puts(e.what()); }
//   // TCPStore at 10.0.0.1:29500: timed out after 300 s waiting for key 'params'.
//   // Hint: a rank that should set it has not reached that point or has died; raise the timeout ...
//
// Every message names where it happened (host and port, key, rank, group, collective) and how long it
// waited; Python sees the same classes as rustytorch.distributed.DistError and its subclasses.
#pragma once
#include "rt/error.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::dist {

class DistError : public rt::Error { using Error::Error; };
// A store operation failed or timed out (the key it waited for, the store's address, the timeout).
class DistStoreError : public DistError { using DistError::DistError; };
// Connecting or talking to a peer failed: refused, reset, an address that does not resolve.
class DistNetworkError : public DistError { using DistError::DistError; };
// A backend (gloo, mpi, nccl) failed a collective, or a peer it waited for died or timed out.
class DistBackendError : public DistError { using DistError::DistError; };

}  // namespace rt::dist

RT_API_END
