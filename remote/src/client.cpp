#include "rt/remote/client.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "net/unix_socket.h"
#include "rt/prof/session_delta.h"
#include "rt/remote/event_batch.h"
#include "rt/remote/frame.h"

namespace rt::remote {
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct AgentClient::Impl {
  UniqueFd fd;
  FrameReader reader;
  AgentManifest agent;
  rt::prof::SessionData session;
  uint64_t resets = 0, batches = 0, dropped = 0;
  int64_t next_id = 1;
  std::vector<std::string> notices;
  std::vector<json> replies;
  std::string error;

  // One frame within `timeout`, or nullopt (timeout, or the connection ended: fd is then closed).
  std::optional<Frame> read_frame(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      if (auto f = reader.next()) return f;
      if (!fd) return std::nullopt;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd p{fd.get(), POLLIN, 0};
      if (::poll(&p, 1, int(std::max<int64_t>(0, left.count()))) <= 0) return std::nullopt;
      char buf[64 << 10];
      const ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        fd.reset();
        if (n < 0) error = fmt::format("connection to the agent lost: {}", std::strerror(errno));
        return std::nullopt;
      }
      if (n > 0) reader.feed(buf, size_t(n));
    }
  }

  ClientEvent handle(const Frame& f) {
    switch (f.type) {
      case FrameType::EventBatch: {
        EventBatch b = decode_event_batch(decompressed(f), session.strings.size());
        dropped = b.dropped_by_agent;
        if (b.delta.reset) {
          session = std::move(b.delta.records);
          ++resets;
        } else {
          rt::prof::append_delta(session, std::move(b.delta));
        }
        ++batches;
        return ClientEvent::Batch;
      }
      case FrameType::Notice:
        notices.push_back(f.payload);
        return ClientEvent::Notice;
      case FrameType::Reply: {
        json r = json::parse(f.payload, nullptr, false);
        if (r.is_discarded() || !r.is_object()) throw ProtocolError("remote protocol: a Reply is not a JSON object");
        replies.push_back(std::move(r));
        return ClientEvent::Reply;
      }
      case FrameType::Error: {
        const json e = json::parse(f.payload, nullptr, false);
        error = e.is_object() && e.contains("error") && e["error"].is_string() ? e["error"].get<std::string>()
                                                                               : std::string("the agent sent an Error frame");
        fd.reset();
        return ClientEvent::Closed;
      }
      default:
        throw ProtocolError(fmt::format("remote protocol: an agent does not send {} frames after Welcome",
                                        frame_type_name(uint8_t(f.type))));
    }
  }

  void send(FrameType type, const std::string& payload) {
    if (!fd) throw RemoteError("remote attach: not connected" + (error.empty() ? std::string() : ": " + error));
    send_all(fd.get(), encode_frame(type, payload), std::chrono::seconds(5));
  }
};

AgentClient::AgentClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AgentClient::AgentClient(AgentClient&&) noexcept = default;
AgentClient& AgentClient::operator=(AgentClient&&) noexcept = default;
AgentClient::~AgentClient() = default;

AgentClient AgentClient::connect(const std::filesystem::path& socket, const std::string& client_name,
                                 std::chrono::milliseconds timeout) {
  auto impl = std::make_unique<Impl>();
  impl->fd = connect_unix(socket);
  try {
    impl->send(FrameType::Hello, json{{"protocol", kProtocolVersion}, {"client", client_name}}.dump());
  } catch (const rt::Error&) {
    // An agent that refuses sends an Error frame and closes at once; our Hello may then meet a closed socket.
    // The refusal is still waiting to be read, and it says more than "broken pipe".
    if (auto f = impl->read_frame(std::chrono::milliseconds(500)); f && f->type == FrameType::Error) {
      impl->handle(*f);
      throw RemoteError(fmt::format("remote attach: {} refused the connection: {}", socket.string(), impl->error));
    }
    throw;
  }
  const auto f = impl->read_frame(timeout);
  if (!f) throw RemoteError(fmt::format("remote attach: {} did not answer Hello within {} ms{}", socket.string(),
                                        timeout.count(), impl->error.empty() ? "" : " (" + impl->error + ")"));
  if (f->type == FrameType::Error) {
    impl->handle(*f);
    throw RemoteError(fmt::format("remote attach: {} refused the connection: {}", socket.string(), impl->error));
  }
  if (f->type != FrameType::Welcome)
    throw ProtocolError(fmt::format("remote protocol: expected Welcome, got {}", frame_type_name(uint8_t(f->type))));
  try {
    impl->agent = parse_manifest(f->payload);
  } catch (const rt::ValueError& e) {
    throw ProtocolError(fmt::format("remote protocol: the Welcome is not a manifest: {}", e.what()));
  }
  return AgentClient(std::move(impl));
}

const AgentManifest& AgentClient::agent() const { return impl_->agent; }

std::string AgentClient::request(const std::string& method, std::chrono::milliseconds timeout) {
  const int64_t id = impl_->next_id++;
  impl_->send(FrameType::Request, json{{"id", id}, {"method", method}}.dump());
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    for (auto it = impl_->replies.begin(); it != impl_->replies.end(); ++it) {
      if (!(*it).contains("id") || (*it)["id"] != id) continue;
      const json r = std::move(*it);
      impl_->replies.erase(it);
      if (r.contains("error")) throw RemoteError(fmt::format("remote attach: the agent refused '{}': {}", method,
                                                              r["error"].is_string() ? r["error"].get<std::string>() : r["error"].dump()));
      return r.contains("result") ? r["result"].dump() : "null";
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 || !impl_->fd)
      throw RemoteError(fmt::format("remote attach: no reply to '{}'{}", method,
                                    impl_->fd ? fmt::format(" within {} ms", timeout.count())
                                              : ": " + (impl_->error.empty() ? std::string("the agent closed the connection") : impl_->error)));
    if (auto f = impl_->read_frame(left)) impl_->handle(*f);
  }
}

ClientEvent AgentClient::poll(std::chrono::milliseconds timeout) {
  if (!impl_->fd && impl_->reader.buffered() == 0) return ClientEvent::Closed;
  try {
    auto f = impl_->read_frame(timeout);
    if (!f) return impl_->fd ? ClientEvent::Nothing : ClientEvent::Closed;
    return impl_->handle(*f);
  } catch (...) {
    impl_->fd.reset();
    throw;
  }
}

const rt::prof::SessionData& AgentClient::session() const { return impl_->session; }
uint64_t AgentClient::resets() const { return impl_->resets; }
uint64_t AgentClient::batches() const { return impl_->batches; }
uint64_t AgentClient::dropped_by_agent() const { return impl_->dropped; }
const std::vector<std::string>& AgentClient::notices() const { return impl_->notices; }
bool AgentClient::connected() const { return bool(impl_->fd); }
const std::string& AgentClient::error() const { return impl_->error; }

}  // namespace rt::remote
