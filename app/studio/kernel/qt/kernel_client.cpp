#include "kernel_client.h"

#include <QMetaObject>
#include <QPointer>

#include <deque>
#include <mutex>
#include <variant>

namespace rt::studio {

namespace {

struct Started { RequestId id; int count; };
struct StreamText { RequestId id; Stream stream; std::string text; };
struct Shown { RequestId id; DisplayData data; };
struct Result { RequestId id; int count; DisplayData data; };
struct Failed { RequestId id; ExecutionError error; };
struct Finished { ExecutionSummary summary; };
struct StateChange { KernelState state; };
struct Variables { VariablesSnapshot snapshot; };
struct Stats { TensorStats stats; };

using Event = std::variant<Started, StreamText, Shown, Result, Failed, Finished, StateChange, Variables, Stats>;

void register_types() {
  static const bool once = [] {
    qRegisterMetaType<rt::studio::KernelState>();
    qRegisterMetaType<rt::studio::Stream>();
    qRegisterMetaType<rt::studio::DisplayData>();
    qRegisterMetaType<rt::studio::ExecutionError>();
    qRegisterMetaType<rt::studio::ExecutionSummary>();
    qRegisterMetaType<rt::studio::VariablesSnapshot>();
    qRegisterMetaType<rt::studio::TensorStats>();
    return true;
  }();
  (void)once;
}

}  // namespace

// Runs on kernel threads: queues events and posts one drain per batch into the client's thread.
struct KernelClient::Relay : KernelListener {
  explicit Relay(KernelClient* client) : client(client) {}

  void push(Event e) {
    bool post = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (closed) return;
      // Merge into a stream chunk still waiting at the tail (same request and stream): a flood of small
      // writes becomes one signal per event-loop turn, order kept because only the tail merges.
      auto* text = std::get_if<StreamText>(&e);
      auto* tail = events.empty() ? nullptr : std::get_if<StreamText>(&events.back());
      if (text && tail && tail->id == text->id && tail->stream == text->stream)
        tail->text += text->text;
      else
        events.push_back(std::move(e));
      const bool finish = std::holds_alternative<Finished>(events.back());
      // A finish also posts when a throttled drain is pending: that one would wait out the throttle.
      post = !drain_posted || (finish && !finish_waiting);
      if (finish) finish_waiting = true;
      drain_posted = true;
    }
    if (post) QMetaObject::invokeMethod(client, [c = QPointer<KernelClient>(client)] { if (c) c->drain(); },
                                        Qt::QueuedConnection);
  }

  std::deque<Event> take() {
    std::lock_guard<std::mutex> lock(mu);
    drain_posted = false;
    finish_waiting = false;
    return std::exchange(events, {});
  }

  bool has_finish_waiting() {
    std::lock_guard<std::mutex> lock(mu);
    return finish_waiting;
  }

  void close() {
    std::lock_guard<std::mutex> lock(mu);
    closed = true;
    events.clear();
  }

  void on_started(RequestId id, int count) override { push(Started{id, count}); }
  void on_stream(RequestId id, Stream s, const std::string& text) override { push(StreamText{id, s, text}); }
  void on_display(RequestId id, const DisplayData& d) override { push(Shown{id, d}); }
  void on_result(RequestId id, int count, const DisplayData& d) override { push(Result{id, count, d}); }
  void on_error(RequestId id, const ExecutionError& e) override { push(Failed{id, e}); }
  void on_finished(const ExecutionSummary& s) override { push(Finished{s}); }
  void on_state(KernelState s) override { push(StateChange{s}); }

  KernelClient* client;
  std::mutex mu;
  std::deque<Event> events;
  bool drain_posted = false;
  bool finish_waiting = false;  // a Finished event is queued: the next drain must not wait for the throttle
  bool closed = false;
};

constexpr std::chrono::milliseconds kMinDrainInterval{16};

KernelClient::KernelClient(KernelOptions options, QObject* parent) : QObject(parent) {
  register_types();
  throttle_ = new QTimer(this);
  throttle_->setSingleShot(true);
  connect(throttle_, &QTimer::timeout, this, [this] {
    last_drain_ = {};
    drain();
  });
  relay_ = std::make_unique<Relay>(this);
  kernel_ = std::make_unique<PythonKernel>(std::move(options));
  kernel_->add_listener(relay_.get());
}

KernelClient::~KernelClient() {
  relay_->close();
  kernel_.reset();  // stops the kernel: no callback runs after this
}

void KernelClient::drain() {
  const auto now = std::chrono::steady_clock::now();
  // Output floods are throttled; a finished cell is not, so Run All submits the next cell at once instead of
  // once per throttle period (Note [Output throttling], kernel_client.h).
  if (now - last_drain_ < kMinDrainInterval && !relay_->has_finish_waiting()) {
    if (!throttle_->isActive())
      throttle_->start(std::chrono::duration_cast<std::chrono::milliseconds>(kMinDrainInterval - (now - last_drain_)) +
                       std::chrono::milliseconds(1));
    return;  // the relay keeps collecting (and merging) until the timer drains
  }
  last_drain_ = now;
  for (Event& event : relay_->take()) {
    std::visit(
        [this](auto& e) {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, Started>) emit started(e.id, e.count);
          else if constexpr (std::is_same_v<T, StreamText>)
            emit streamOutput(e.id, e.stream, QString::fromUtf8(e.text.data(), qsizetype(e.text.size())));
          else if constexpr (std::is_same_v<T, Shown>) emit displayData(e.id, e.data);
          else if constexpr (std::is_same_v<T, Result>) emit executeResult(e.id, e.count, e.data);
          else if constexpr (std::is_same_v<T, Failed>) emit executeError(e.id, e.error);
          else if constexpr (std::is_same_v<T, Finished>) emit finished(e.summary);
          else if constexpr (std::is_same_v<T, StateChange>) emit stateChanged(e.state);
          else if constexpr (std::is_same_v<T, Variables>) emit variablesReady(e.snapshot);
          else if constexpr (std::is_same_v<T, Stats>) emit tensorStatsReady(e.stats);
        },
        event);
  }
}

quint64 KernelClient::execute(const QString& code, const QString& cellLabel) {
  return kernel_->execute(code.toStdString(), cellLabel.toStdString());
}

void KernelClient::interrupt() { kernel_->interrupt(); }
void KernelClient::restart() { kernel_->restart(); }
void KernelClient::setWorkingDirectory(const QString& dir) { kernel_->set_working_directory(dir.toStdString()); }

void KernelClient::requestVariables() {
  Relay* relay = relay_.get();
  kernel_->request_variables([relay](VariablesSnapshot s) { relay->push(Variables{std::move(s)}); });
}

void KernelClient::requestTensorStats(const QString& name) {
  Relay* relay = relay_.get();
  kernel_->request_tensor_stats(name.toStdString(), [relay](TensorStats s) { relay->push(Stats{std::move(s)}); });
}

KernelState KernelClient::state() const { return kernel_->state(); }
QString KernelClient::startupError() const { return QString::fromStdString(kernel_->startup_error()); }
PythonKernel& KernelClient::kernel() { return *kernel_; }

}  // namespace rt::studio
