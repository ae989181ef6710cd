// The Graph and Debugger panels on the real sample models (run under `xvfb-run -a`): the studio's Python kernel
// builds samples/digits_cnn.py's DigitsCNN and samples/char_transformer.py's CharGPT, profiles two training steps
// into a store, then runs a backward under the armed debugger, which pauses at a breakpoint on a real node
// (the second convolution, the last block's attention softmax). Screenshots, checked for what they show:
//   <build>/test-artifacts/samples-<sample>-debugger.png      the debugger paused, with gradient statistics
//   <build>/test-artifacts/samples-<sample>-graph-paused.png  the graph panel with the paused node highlighted
//   <build>/test-artifacts/samples-<sample>-graph-profile.png the graph panel on the profiled session, annotated
//   <build>/test-artifacts/samples-<sample>-grad-norms.png    per-parameter gradient norms over four steps
#include <QApplication>
#include <QComboBox>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>

#include "debugger/debugger_contents.h"
#include "debugger/debugger_session.h"
#include "debugger/graph_content.h"
#include "debugger/graph_panel_widget.h"
#include "imgui_host/offscreen_render.h"
#include "imgui_test_contents.h"
#include "kernel/python_kernel.h"
#include "rt/prof/store.h"
#include "viz_panels/session_source.h"

using namespace rt::studio;
using namespace rt::studio::test;
namespace dbg = rt::debug;
namespace fs = std::filesystem;

namespace {

// Remembers each cell's outcome and what it wrote (for failure messages).
struct CellLog : KernelListener {
  std::mutex mu;
  std::string text;
  int finished = 0, failed = 0;
  void on_stream(RequestId, Stream, const std::string& s) override {
    std::lock_guard lk(mu);
    text += s;
  }
  void on_error(RequestId, const ExecutionError& e) override {
    std::lock_guard lk(mu);
    text += e.ename + ": " + e.evalue + "\n";
  }
  void on_finished(const ExecutionSummary& s) override {
    std::lock_guard lk(mu);
    ++finished;
    if (s.status != ExecutionStatus::ok) ++failed;
  }
  std::string output() {
    std::lock_guard lk(mu);
    return text;
  }
};

struct Sample {
  const char* name;
  const char* setup;        // defines model, step() -> loss
  const char* break_op;     // the breakpoint's op
  const char* paused_module;         // the paused node's module path ends with this
  std::vector<const char*> modules;  // the graph must have clusters whose paths end with these
  QSize profile_size;                // the profile picture with those modules expanded, at a legible zoom
};

// Loads a sample script as a module without running its main().
const char* kImportSample = R"py(
import importlib.util, os, sys
import rustytorch as rt
from rustytorch import nn
from rustytorch.nn import functional as F
def load_sample(name):
    path = os.path.join(SAMPLES, name + ".py")
    sys.path.insert(0, SAMPLES)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
)py";

const Sample kDigits{"digits_cnn", R"py(
cnn = load_sample("digits_cnn")
from digits_data import load_digits
rt.manual_seed(0)
train, _ = load_digits(image_shape=(1, 8, 8), seed=0)
x, y = (t[:32] for t in train.tensors)
model = cnn.DigitsCNN()
def step():
    loss = F.cross_entropy(model(x), y)
    model.zero_grad()
    loss.backward()
    return loss
)py", "ConvolutionBackward0", "features.4", {"features", "features.0", "features.4", "classifier", "classifier.2"},
                      {1600, 1000}};

const Sample kChar{"char_transformer", R"py(
ct = load_sample("char_transformer")
rt.manual_seed(0)
with open(ct.TEXT_FILE, encoding="utf-8") as f:
    text = f.read()
vocab = ct.CharVocab(text)
data = rt.tensor(vocab.encode(text[:20000]), dtype=rt.int64)
model = ct.CharGPT(len(vocab))
x, y = next(ct.batches(data, model.block_size, 8, rt.Generator().manual_seed(0)))
def step():
    loss = F.cross_entropy(model(x).reshape(-1, len(vocab)), y.reshape(-1))
    model.zero_grad()
    loss.backward()
    return loss
)py", "SoftmaxBackward0", "1.attn", {"tok", "pos", "0.attn.qkv", "1.mlp", "head"},
                    {1400, 2600}};

QImage render(ImGuiContent& content, QSize size, const std::function<bool()>& busy = {}) {
  OffscreenRenderOptions options;
  options.size = size;
  options.frames = 4;
  QImage image = render_to_image(content, options);
  for (int i = 0; i < 500 && busy && busy(); ++i) {
    QThread::msleep(20);
    image = render_to_image(content, options);
  }
  return image;
}

// A cluster whose path is `suffix` or ends with ".<suffix>" (the Python ModuleList's children record their
// paths without the list's name: "0.attn" where named_modules() says "blocks.0.attn").
int find_cluster_ending(const rt::viz::GraphModel& model, const std::string& suffix) {
  for (size_t c = 0; c < model.cluster_count(); ++c) {
    const std::string& p = model.cluster(int(c)).path;
    if (p == suffix || (p.size() > suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0 &&
                        p[p.size() - suffix.size() - 1] == '.'))
      return int(c);
  }
  return -1;
}

// Bright text pixels inside a node's box: its label was drawn (not clipped away, not empty).
int label_pixels(const QImage& image, const rt::viz::Rect& r) {
  return count_bright(image, QRect(int(r.x) + 2, int(r.y) + 2, int(r.w) - 4, int(r.h) - 4), 150);
}

}  // namespace

class GraphSamplesTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<PythonKernel> kernel_;
  CellLog log_;
  QTemporaryDir dir_;

  bool run_cell(const std::string& code, int timeout_ms = 240000) {
    const int before = log_.finished;
    kernel_->execute(code);
    const bool idle = kernel_->wait_until_idle(std::chrono::milliseconds(timeout_ms));
    return idle && log_.finished == before + 1 && log_.failed == 0;
  }

  void check_sample(const Sample& s) {
    const std::string store = (dir_.path() + "/" + s.name + ".sqlite").toStdString();
    QVERIFY2(run_cell(std::string(kImportSample) + "SAMPLES = " + "'" RT_SAMPLES_DIR "'\n" + s.setup), log_.output().c_str());
    // Two profiled training steps into a store (what `rtorch run --store` records).
    QVERIFY2(run_cell("with rt.profiler.profile(profile_memory=True, record_shapes=True, store='" + store +
                      "', name='" + s.name + "') as prof:\n    for _ in range(2):\n        step()\n        prof.step()\n"),
             log_.output().c_str());

    // A backward under the armed debugger pauses at the breakpoint, on the kernel's thread.
    auto session = std::make_shared<DebuggerSession>();
    const int breakpoint = session->break_on_op(s.break_op);
    session->arm(true);
    const int before = log_.finished;
    kernel_->execute("loss = step()\n");
    QVERIFY2(wait_until([&] {
      session->poll();
      return session->status().paused.has_value() || log_.finished > before;
    }, 120000), "the backward neither paused nor finished");
    QVERIFY2(session->status().paused.has_value(), log_.output().c_str());
    const dbg::PausedState p = *session->status().paused;
    QCOMPARE(QString::fromStdString(p.node.name), QString::fromLatin1(s.break_op));
    QVERIFY2(QString::fromStdString(p.node.module).endsWith(QString::fromLatin1(s.paused_module)), p.node.module.c_str());
    QCOMPARE(p.reason, dbg::PauseReason::Breakpoint);
    QVERIFY(!p.grad_outputs.empty());
    for (const auto& g : p.grad_outputs) {
      QVERIFY(g.numel > 0);
      QVERIFY(std::isfinite(g.norm) && g.norm > 0);
      QCOMPARE(g.nan_count, int64_t(0));
    }

    DebuggerContent debugger(session);
    const QImage dimg = render(debugger, {1400, 560});
    QVERIFY(dimg.save(artifacts_dir() + "/samples-" + s.name + "-debugger.png", "PNG"));
    const auto& layout = debugger.view().layout();
    QCOMPARE(layout.rows.size(), p.grad_outputs.size() + p.grad_inputs.size());
    QCOMPARE(layout.order_entries, p.order.size());
    QVERIFY(p.order.size() > 10);
    for (const auto& row : layout.rows)  // each gradient row has its histogram drawn
      QVERIFY(count_color(dimg, QRect(QPoint(int(row.hist_min.x), int(row.hist_min.y)),
                                      QPoint(int(row.hist_max.x) - 1, int(row.hist_max.y) - 1)),
                          QColor(90, 170, 255), 40) > 10);

    GraphContent paused(session);
    const QImage pimg = render(paused, {1400, 800}, [&] { return paused.view().laying_out() || !paused.view().layout(); });
    QVERIFY(pimg.save(artifacts_dir() + "/samples-" + s.name + "-graph-paused.png", "PNG"));
    const auto& pv = paused.view();
    QVERIFY(pv.layout() && pv.visible());
    QVERIFY(pv.highlight().node >= 0);
    QCOMPARE(QString::fromStdString(pv.visible()->nodes[size_t(pv.highlight().node)].title), QString::fromLatin1(s.break_op));
    // Readable: a graph too large to fit legibly is shown zoomed in around the paused node.
    QVERIFY(pv.viewport().scale() >= 0.85);
    const rt::viz::Rect hr = *pv.node_screen_rect(pv.highlight().node);
    QVERIFY(QRect(0, 0, pimg.width(), pimg.height()).contains(QRect(int(hr.x), int(hr.y), int(hr.w), int(hr.h))));
    QVERIFY(label_pixels(pimg, hr) > 20);

    session->remove_breakpoint(breakpoint);  // the op runs again further down (the first conv, block 0)
    QVERIFY(session->cont());
    QVERIFY(wait_until([&] {
      session->poll();
      return log_.finished > before && !session->status().running;
    }, 120000));
    QCOMPARE(log_.failed, 0);
    // Three training steps under the armed debugger (no breakpoints): each finished backward adds a step
    // of per-parameter gradient norms, named after the graph's parameters.
    QVERIFY2(run_cell("opt = rt.optim.SGD(model.parameters(), lr=0.5)\nfor _ in range(3):\n    step()\n    opt.step()\n"),
             log_.output().c_str());
    QVERIFY(wait_until([&] {
      session->poll();
      return session->grad_norms().steps().size() >= 4;
    }, 60000));
    const size_t params = session->grad_norms().steps().back().params.size();
    QVERIFY2(params >= 6, qPrintable(QString::number(params)));
    GradNormContent norms(session);
    const QImage nimg = render(norms, {1400, 520});
    QVERIFY(nimg.save(artifacts_dir() + "/samples-" + s.name + "-grad-norms.png", "PNG"));
    const auto& chart = norms.chart().layout();
    QCOMPARE(chart.steps, int64_t(session->grad_norms().steps().size()));
    QVERIFY(!chart.legend.empty());
    const QRect plot = to_rect(chart.plot_min, chart.plot_max);
    QVERIFY(count_color(nimg, plot, qcolor(chart.legend.front().color), 4) > 20);  // its line is drawn
    // Every step is labelled under the x axis, at its place (the chart insets the first and last step by 10 px).
    for (int64_t k = 0; k < chart.steps; ++k) {
      const int x = plot.left() + 10 + int(double(plot.width() - 20) * double(k) / double(chart.steps - 1));
      QVERIFY2(count_bright(nimg, QRect(x - 8, plot.bottom() + 2, 16, 18), 120) > 3, qPrintable(QString::number(k)));
    }
    session->arm(false);

    // The graph panel on the profiled session: its latest backward, every op's time from the same session.
    auto data = load_session(parse_store_argument(store));
    QCOMPARE(data->graphs.size(), size_t(2));
    QCOMPARE(data->graphs[1].backward_index, uint64_t(1));
    GraphPanelWidget panel(session);
    panel.resize(1400, 860);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.showProfiles(true);
    QVERIFY(panel.picker()->openStore(QString::fromStdString(store)));
    GraphContent* content = panel.content();
    QVERIFY(content->showing_profile());
    QVERIFY2(panel.statusText().isEmpty(), qPrintable(panel.statusText()));
    const rt::prof::GraphRecord* shown = content->profile_graph();
    QVERIFY(shown);
    QCOMPARE(shown->backward_index, uint64_t(1));
    const size_t ops = shown->graph.nodes.size();
    size_t leaves = 0;
    for (const auto& n : shown->graph.nodes) leaves += n.is_leaf;
    QVERIFY(ops > 20);
    // Every op but the AccumulateGrad leaves matched its forward/backward records.
    QCOMPARE(content->annotations()->matched_ops(), ops - leaves);
    auto model = content->view().model();
    for (const char* m : s.modules) QVERIFY2(find_cluster_ending(*model, m) >= 0, m);
    QVERIFY(wait_until([&] {
      panel.host()->requestFrame();
      return content->view().layout() && !content->view().laying_out();
    }, 60000));
    QVERIFY(wait_until([&] { return panel.grab().save(artifacts_dir() + "/samples-" + s.name + "-graph-panel.png", "PNG"); }, 5000));
    // The same graph offscreen, the first backward's this time, each module expanded to show its structure.
    GraphContent first(nullptr);
    first.show_profile(data, 0);
    QCOMPARE(first.profile_graph()->backward_index, uint64_t(0));
    for (const char* m : s.modules) first.view().expand(find_cluster_ending(*first.view().model(), m));
    const QImage fimg = render(first, s.profile_size, [&] { return first.view().laying_out() || !first.view().layout(); });
    QVERIFY(fimg.save(artifacts_dir() + "/samples-" + s.name + "-graph-profile.png", "PNG"));
    const auto& fv = first.view();
    QVERIFY(fv.layout() && fv.visible());
    size_t annotated = 0, labelled = 0;
    for (size_t i = 0; i < fv.visible()->nodes.size(); ++i) {
      const auto& n = fv.visible()->nodes[i];
      if (n.subtitle.find(" ms") != std::string::npos || n.subtitle.find(" us") != std::string::npos ||
          n.subtitle.find(" µs") != std::string::npos || n.subtitle.find(" ns") != std::string::npos)
        ++annotated;
      if (label_pixels(fimg, *fv.node_screen_rect(int(i))) > 8) ++labelled;
    }
    QVERIFY2(annotated * 2 > fv.visible()->nodes.size(), qPrintable(QString("%1 of %2 nodes show a time")
                                                                     .arg(annotated).arg(fv.visible()->nodes.size())));
    QCOMPARE(labelled, fv.visible()->nodes.size());
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    KernelOptions options;
    options.python_paths = {RT_TEST_PYTHON_DIR};
    options.capture_fd_output = false;
    kernel_ = std::make_unique<PythonKernel>(options);
    kernel_->add_listener(&log_);
  }
  void cleanupTestCase() {
    kernel_->remove_listener(&log_);
    kernel_.reset();
  }

  void digits_cnn() { check_sample(kDigits); }
  void char_transformer() { check_sample(kChar); }
};

QTEST_MAIN(GraphSamplesTest)
#include "test_graph_samples.moc"
