#include "studio_startup.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QTimer>

#include <cstdio>
#include <memory>

#include "kernel/qt/kernel_client.h"
#include "notebook/notebook_document.h"
#include "shell/autosaver.h"
#include "shell/first_frame_probe.h"
#include "shell/main_window.h"
#include "shell/recovery_offer.h"

namespace rt::studio {

void configure_application(QApplication& app) {
  QApplication::setOrganizationName(QStringLiteral("RustyTorch"));
  QApplication::setApplicationName(QStringLiteral("rtorch-studio"));
  QApplication::setApplicationDisplayName(QStringLiteral("RustyTorch++ Studio"));
  QApplication::setApplicationVersion(QStringLiteral(RT_VERSION));
  QApplication::setStyle(QStringLiteral("Fusion"));
  app.setQuitOnLastWindowClosed(true);
}

StudioSession::StudioSession(StudioOptions options, const PanelRegistration& register_panels)
    : options_(std::move(options)) {
  register_panels(panels_);
  KernelOptions kernel_options;
  if (!options_.notebook.empty())
    kernel_options.working_directory =
        QFileInfo(QString::fromStdString(options_.notebook)).absolutePath().toStdString();
  kernel_ = std::make_unique<KernelClient>(kernel_options);
  window_ = std::make_unique<MainWindow>(panels_, *kernel_,
                                         MainWindowOptions{.autosave_interval_ms = options_.autosave_interval_ms});
}

StudioSession::~StudioSession() {
  window_.reset();  // the view detaches from the kernel before the kernel stops
  kernel_.reset();
}

void StudioSession::start() {
  if (options_.exit_after_shown) watch_for_exit_after_shown();
  window_->show();
  QTimer::singleShot(0, this, [this] {
    open_initial_notebook();
    if (options_.run_all) run_all_when_kernel_starts();
    emit ready();
  });
}

void StudioSession::open_initial_notebook() {
  // Absolute already (parse_command_line): the interpreter has changed the process's directory by now.
  const QString requested = QString::fromStdString(options_.notebook);
  RecoveryStore& store = window_->autosaver().store();
  if (std::optional<RecoveredNotebook> recovered = offer_recovery(window_.get(), store, requested)) {
    const std::string key = recovered->key;
    window_->adopt(std::make_unique<NotebookDocument>(std::move(recovered->document)));
    if (key != window_->autosaver().current_key()) store.discard(key);
    return;
  }
  if (!requested.isEmpty()) window_->open_file(requested);
}

void StudioSession::run_all_when_kernel_starts() {
  auto trigger = [this] { window_->action(QStringLiteral("actionRunAll"))->trigger(); };
  if (kernel_->state() == KernelState::idle) {
    trigger();
    return;
  }
  auto* once = new QObject(this);
  auto done = std::make_shared<bool>(false);
  connect(kernel_.get(), &KernelClient::stateChanged, once, [once, done, trigger](KernelState state) {
    if (state != KernelState::idle || *done) return;
    *done = true;  // a later idle (after the run) must not run everything again
    once->deleteLater();
    trigger();
  });
}

void StudioSession::watch_for_exit_after_shown() {
  auto* probe = new FirstFrameProbe(window_.get());
  connect(probe, &FirstFrameProbe::firstFrame, this, [this](double ms) {
    std::printf("rtorch-studio: first frame after %.1f ms\n", ms);
    std::fflush(stdout);
    if (options_.idle_ms_before_exit <= 0) {
      QTimer::singleShot(0, qApp, [] { QCoreApplication::exit(0); });
      return;
    }
    auto* poll = new QTimer(this);
    auto idle_since = std::make_shared<qint64>(-1);
    auto clock = std::make_shared<QElapsedTimer>();
    clock->start();
    connect(poll, &QTimer::timeout, this, [this, poll, idle_since, clock] {
      const KernelState state = kernel_->state();
      if (state != KernelState::idle && state != KernelState::failed) {
        *idle_since = -1;
        return;
      }
      if (*idle_since < 0) *idle_since = clock->elapsed();
      if (clock->elapsed() - *idle_since < options_.idle_ms_before_exit) return;
      poll->stop();
      const NotebookDocument* doc = window_->document();
      const std::string notebook = doc && !doc->path().empty() ? doc->path().string() : std::string("untitled");
      std::printf("rtorch-studio: idle resident memory %.1f MiB (kernel %s, notebook %s, %zu cells)\n", resident_mib(),
                  to_string(state), notebook.c_str(), doc ? doc->cell_count() : std::size_t{0});
      std::fflush(stdout);
      // exit(), not quit(): Qt 6's quit() first closes the windows, and a notebook the run changed would ask
      // whether to save it. This hook measures and leaves; the recovery copy keeps the edits.
      QCoreApplication::exit(0);
    });
    poll->start(20);
  });
}

}  // namespace rt::studio
