#include "gloo_device.h"

#include <fmt/core.h>
#include <gloo/common/error.h>
#include <gloo/transport/tcp/device.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "rt/dist/errors.h"

namespace rt::dist::detail {

namespace {
std::shared_ptr<gloo::transport::Device> create() {
  if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface && *iface) {
    gloo::transport::tcp::attr attr;
    attr.iface = iface;
    try {
      return gloo::transport::tcp::CreateDevice(attr);
    } catch (const std::exception& e) {
      throw DistNetworkError(fmt::format("gloo cannot use the interface GLOO_SOCKET_IFNAME={}: {}. Hint: list the "
                                         "interfaces with `ip -brief address` and name one that is up",
                                         iface, e.what()));
    }
  }
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0 && host[0]) {
    try {
      return gloo::transport::tcp::CreateDevice(gloo::transport::tcp::attr(host));
    } catch (const std::exception&) {
      // The host name resolves to nothing bindable: fall back to loopback (one-machine jobs).
    }
  }
  return gloo::transport::tcp::CreateDevice(gloo::transport::tcp::attr("127.0.0.1"));
}
}  // namespace

std::shared_ptr<gloo::transport::Device> make_gloo_device() {
  static std::mutex mutex;
  static std::shared_ptr<gloo::transport::Device> device;
  std::lock_guard<std::mutex> lock(mutex);
  if (!device) device = create();
  return device;
}

}  // namespace rt::dist::detail
