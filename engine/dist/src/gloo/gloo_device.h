// The gloo TCP device a process's groups share: which address gloo listens on.
#pragma once
#include <memory>

#include <gloo/transport/device.h>

namespace rt::dist::detail {

// GLOO_SOCKET_IFNAME names an interface (PyTorch's variable); otherwise the address this host's name
// resolves to, and the loopback address when it resolves to nothing gloo can bind (a laptop whose
// hostname maps to nothing, a container). One device per process, created on first use.
std::shared_ptr<gloo::transport::Device> make_gloo_device();

}  // namespace rt::dist::detail
