// studio_gui_bench — per-cell overhead of trivial cells in the studio's window, the path a user clicks:
// Run All through the main window's action, KernelClient's signals, the document's outputs and the cell
// widgets. Prints the medians of --runs Run Alls of N and of 1 + N cells, and (t(1+N) - t(1)) / N.
//
//   build/bin/studio_gui_bench [--cells 200] [--runs 5]     (needs a display: bench/studio/studio_bench.py runs
//                                                            it under xvfb-run with the other studio figures)
#include <QAction>
#include <QApplication>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernel/qt/kernel_client.h"
#include "notebook/notebook_document.h"
#include "notebook_view/notebook_view.h"
#include "panels/builtin_panels.h"
#include "shell/main_window.h"
#include "shell/studio_startup.h"

namespace {

using namespace rt::studio;

// Sleeps in the event loop between events (a busy poll would take a core from the kernel thread); the
// timer wakes it up to check the deadline.
bool wait_until(const std::function<bool()>& done, int timeout_ms) {
  QElapsedTimer clock;
  clock.start();
  QTimer wake;
  wake.start(50);
  while (!done()) {
    if (clock.elapsed() > timeout_ms) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
  }
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Bench {
  KernelClient& kernel;
  MainWindow& window;
  std::string scratch_notebook;  // saved to outside the timed part, so new_notebook() asks nothing

  // Lets posted layout requests and paints of a freshly built notebook finish before the clock starts.
  void settle() {
    QElapsedTimer quiet;
    quiet.start();
    while (quiet.elapsed() < 300) {
      QCoreApplication::sendPostedEvents();
      QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    }
    window.repaint();
  }

  bool idle() const { return !window.view()->is_busy() && kernel.state() == KernelState::idle; }

  // A fresh notebook of `cells` cells of `source`; then Run All, timed until the view and kernel are idle.
  double run_all_ms(int cells, const std::string& source) {
    window.new_notebook();
    NotebookDocument& doc = *window.document();
    doc.set_source(0, source);
    for (int i = 1; i < cells; ++i) doc.insert_cell(i, CellType::code, source);
    doc.save_as(scratch_notebook);
    settle();  // the new cell widgets' first layout and paint are not part of running them
    QElapsedTimer clock;
    clock.start();
    window.action("actionRunAll")->trigger();
    if (!wait_until([&] { return idle() && doc.cell(doc.cell_count() - 1).execution_count.has_value(); }, 120000)) {
      std::fprintf(stderr, "studio_gui_bench: Run All of %d cells did not finish in 120 s\n", cells);
      std::exit(1);
    }
    const double ms = clock.nsecsElapsed() / 1e6;
    doc.save();
    return ms;
  }
};

}  // namespace

int main(int argc, char** argv) {
  int cells = 200, runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--cells")) cells = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: studio_gui_bench [--cells N] [--runs R]\n");
      return 2;
    }
  }
  if (cells < 1 || runs < 1) {
    std::fprintf(stderr, "studio_gui_bench: --cells and --runs must be at least 1\n");
    return 2;
  }
  QTemporaryDir scratch;  // settings and recovery files of this run only
  qputenv("XDG_CONFIG_HOME", scratch.filePath("config").toUtf8());
  qputenv("RT_STUDIO_RECOVERY_DIR", scratch.filePath("recovery").toUtf8());
  QApplication app(argc, argv);
  configure_application(app);
  KernelClient kernel;
  PanelRegistry panels;
  register_builtin_panels(panels);
  MainWindow window(panels, kernel);
  window.show();
  if (!wait_until([&] { return kernel.state() == KernelState::idle; }, 60000)) {
    std::fprintf(stderr, "studio_gui_bench: the kernel did not start in 60 s\n");
    return 1;
  }
  Bench bench{kernel, window, scratch.filePath("bench.ipynb").toStdString()};
  bench.run_all_ms(cells, "pass");  // warm-up: widget creation paths, lexer, first compile
  const struct { const char* name; std::string source; } kinds[] = {
      {"pass", "pass"}, {"print('x')", "print('x')"}, {"1 + 1 (an execute_result)", "1 + 1"}};
  std::printf("%-28s %12s %12s %14s\n", "trivial cell", "1 cell ms", "1+N cells ms", "per cell ms");
  for (const auto& kind : kinds) {
    std::vector<double> one, many;
    for (int r = 0; r < runs; ++r) {
      one.push_back(bench.run_all_ms(1, kind.source));
      many.push_back(bench.run_all_ms(1 + cells, kind.source));
    }
    const double per_cell = (median(many) - median(one)) / cells;
    std::printf("%-28s %12.2f %12.1f %14.3f\n", kind.name, median(one), median(many), per_cell);
  }
  std::printf("(N = %d, medians of %d Run Alls, window %dx%d)\n", cells, runs, window.width(), window.height());
  return 0;
}
