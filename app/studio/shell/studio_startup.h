// app/studio/shell/studio_startup.h — what `rtorch-studio` does to open its window; main() and the UI tests
// share it, so tests drive the same startup path as users.
//
//   QApplication app(argc, argv);
//   configure_application(app);                 // names for QSettings, style, window icon
//   StudioSession session(options, register_builtin_panels);   // kernel (starting in the background), panels
//                                                              // (app/studio/panels/builtin_panels.h), window
//   session.start();                            // show; offer crash recovery; open options.notebook
//   return app.exec();
//
// start(): shows the window first (so it paints while the kernel starts), then — on the next event-loop turn —
// offers recovery copies (shell/recovery_offer.h; only the requested notebook's when one was given), and opens
// options.notebook unless its recovered copy was taken; with options.run_all it then runs every cell once the
// kernel is idle (Run All, as the user would). With options.exit_after_shown it prints
//   rtorch-studio: first frame after 312.4 ms
// when the window has painted, and (with idle_ms_before_exit) once the kernel has been idle that long
//   rtorch-studio: idle resident memory 143.2 MiB
// then quits the application with status 0.
//
// Contracts: a StudioSession owns the process's only KernelClient, so create at most one per process. The shell
// knows panels only through shell/panel.h: the caller's register_panels fills the registry (the executable links
// the built-in panels; a test may register its own).
#pragma once
#include <QObject>

#include <functional>
#include <memory>

#include "command_line.h"
#include "shell/panel.h"

class QApplication;

namespace rt::studio {

class KernelClient;
class MainWindow;

void configure_application(QApplication& app);

class StudioSession : public QObject {
  Q_OBJECT

 public:
  using PanelRegistration = std::function<void(PanelRegistry&)>;
  StudioSession(StudioOptions options, const PanelRegistration& register_panels);
  ~StudioSession() override;

  void start();
  MainWindow& window() const { return *window_; }
  KernelClient& kernel() const { return *kernel_; }
  const PanelRegistry& panels() const { return panels_; }

 signals:
  // After start()'s deferred part: recovery offered and the notebook (if any) opened.
  void ready();

 private:
  void open_initial_notebook();
  void watch_for_exit_after_shown();
  void run_all_when_kernel_starts();

  StudioOptions options_;
  PanelRegistry panels_;
  std::unique_ptr<KernelClient> kernel_;
  std::unique_ptr<MainWindow> window_;
};

}  // namespace rt::studio
