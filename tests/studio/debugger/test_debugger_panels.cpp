// The gradient debugger's panels on a real X server (run under `xvfb-run -a`): a small MLP's backward, run on a
// std::thread while the debugger panel is armed, pauses at a planted NaN (sqrt of negative outputs); the
// panel's toolbar steps, continues and stops it; the graph panel highlights the paused node; the grad-norm
// panel flags vanishing and exploding parameters. Screenshots: <build>/test-artifacts/debugger-*.png.
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTreeWidget>
#include <QWheelEvent>
#include <QtTest>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <exception>
#include <thread>

#include "debugger/debugger_contents.h"
#include "debugger/graph_capture.h"
#include "debugger/debugger_panels.h"
#include "debugger/debugger_session.h"
#include "debugger/debugger_widget.h"
#include "debugger/graph_panel_widget.h"
#include "debugger_models.h"
#include "imgui_host/offscreen_render.h"
#include "imgui_test_contents.h"
#include "rt/rt.h"
#include "rt/viz/draw/grad_norm_chart.h"
#include "shell/panel.h"

using namespace rt::studio;
using namespace rt::studio::test;
namespace dbg = rt::debug;

namespace {

// loss.backward() on its own thread, like the kernel's interpreter thread; keeps what it threw.
class BackwardThread {
 public:
  // A failed check leaves the backward paused: the destructor stops it before joining.
  BackwardThread(DebuggerSession& session, rt::Tensor loss) : session_(session), thread_([this, loss] {
    {
      std::lock_guard lock(token_mu_);
      token_ = rt::CancelToken::current();
    }
    token_ready_.notify_all();
    try {
      loss.backward();
    } catch (...) {
      error_ = std::current_exception();
    }
    done_ = true;
  }) {}
  ~BackwardThread() {
    if (!done_) session_.debugger().stop();
    join();
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  bool done() const { return done_; }
  std::exception_ptr error() const { return error_; }
  // The backward thread's cancel token: what the studio's interrupt aims at the interpreter thread.
  rt::CancelToken cancel_token() {
    std::unique_lock lock(token_mu_);
    token_ready_.wait(lock, [this] { return token_.has_value(); });
    return *token_;
  }

 private:
  DebuggerSession& session_;
  std::exception_ptr error_;
  std::atomic<bool> done_{false};
  std::mutex token_mu_;
  std::condition_variable token_ready_;
  std::optional<rt::CancelToken> token_;
  std::thread thread_;
};

QImage render(ImGuiContent& content, QSize size, const std::function<bool()>& busy = {}) {
  OffscreenRenderOptions options;
  options.size = size;
  options.frames = 4;
  QImage image = render_to_image(content, options);
  for (int i = 0; i < 300 && busy && busy(); ++i) {
    QThread::msleep(20);
    image = render_to_image(content, options);
  }
  return image;
}

// Pixels that read as "red" (NaN/Inf text, exploding marks).
int count_red(const QImage& image, const QRect& area) {
  int n = 0;
  const QRect r = area.intersected(image.rect());
  for (int y = r.top(); y <= r.bottom(); ++y)
    for (int x = r.left(); x <= r.right(); ++x) {
      const QColor c = image.pixelColor(x, y);
      if (c.red() > 200 && c.green() < 140 && c.blue() < 130) ++n;
    }
  return n;
}

bool wait_for(DebuggerSession& s, const std::function<bool()>& done, int timeout_ms = 60000) {
  return wait_until([&] {
    s.poll();
    return done();
  }, timeout_ms);
}

}  // namespace

class DebuggerPanelsTest : public QObject {
  Q_OBJECT

 private slots:
  void registers_three_panels() {
    PanelRegistry registry;
    register_debugger_panels(registry);
    QCOMPARE(registry.panels().size(), size_t(3));
    QVERIFY(registry.find("debugger")->starts_visible());
    QVERIFY(!registry.find("graph")->starts_visible());
    QVERIFY(!registry.find("grad_norms")->starts_visible());
    QWidget parent;
    QVERIFY(qobject_cast<DebuggerWidget*>(registry.find("debugger")->create_widget({}, &parent)));
    auto* graph = qobject_cast<GraphPanelWidget*>(registry.find("graph")->create_widget({}, &parent));
    QVERIFY(graph);
    QVERIFY(!graph->showingProfiles());  // the debugger's graph first
    QVERIFY(!graph->picker()->isVisibleTo(graph));
    QVERIFY(qobject_cast<ImGuiHostWidget*>(registry.find("grad_norms")->create_widget({}, &parent)));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, register_debugger_panels(registry));
  }

  void capture_graph_matches_snapshot_graph() {
    rt::manual_seed(1);
    auto net = std::make_shared<TinyConv>();
    rt::Tensor loss = rt::mse_loss((*net)(rt::randn({2, 1, 6, 6})), rt::randn({2, 3}));
    const rt::autograd::GraphSnapshot want = rt::autograd::snapshot_graph({loss});
    const CapturedGraph got = capture_graph(*loss.grad_fn());
    QCOMPARE(got.snapshot.nodes.size(), want.nodes.size());
    for (size_t i = 0; i < want.nodes.size(); ++i) {
      QCOMPARE(got.snapshot.nodes[i].id, want.nodes[i].id);
      QCOMPARE(got.snapshot.nodes[i].name, want.nodes[i].name);
      QCOMPARE(got.snapshot.nodes[i].leaf_shape, want.nodes[i].leaf_shape);
    }
    QCOMPARE(got.snapshot.edges.size(), want.edges.size());
    for (size_t i = 0; i < want.edges.size(); ++i) {
      QCOMPARE(got.snapshot.edges[i].from, want.edges[i].from);
      QCOMPARE(got.snapshot.edges[i].to, want.edges[i].to);
      QCOMPARE(got.snapshot.edges[i].shape, want.edges[i].shape);
    }
    // One named leaf per parameter (ops were not observed, so the modules are unknown: "(top)").
    QCOMPARE(got.leaves.size(), net->parameters().size());
    QCOMPARE(QString::fromStdString(got.leaves[0].first).startsWith("(top) ["), true);
  }

  void graph_panel_pans_zooms_and_fits_with_the_mouse() {
    auto session = std::make_shared<DebuggerSession>();
    session->arm(true);
    rt::manual_seed(4);
    auto mlp = std::make_shared<Mlp>();
    rt::mse_loss((*mlp)(rt::randn({4, 6})), rt::randn({4, 4})).backward();
    session->poll();
    QVERIFY(session->graph());
    ImGuiHostWidget host;
    host.resize(900, 600);
    host.setContent(std::make_unique<GraphContent>(session));
    host.show();
    QVERIFY(QTest::qWaitForWindowExposed(&host));
    auto& view = static_cast<GraphContent*>(host.content())->view();
    QVERIFY(wait_until([&] {
      host.requestFrame();
      return view.layout() && !view.laying_out();
    }, 20000));
    settle_count([&] { return host.framesDrawn(); });
    // A click on the collapsed fc1 module expands it; hovering an op shows its tooltip.
    int fc1 = -1;
    for (size_t i = 0; i < view.visible()->nodes.size(); ++i)
      if (view.visible()->nodes[i].kind == rt::viz::VisibleKind::Cluster && view.visible()->nodes[i].title.rfind("fc1", 0) == 0) fc1 = int(i);
    QVERIFY(fc1 >= 0);
    const rt::viz::Point c = view.node_screen_rect(fc1)->center();
    QTest::mouseMove(&host, QPoint(int(c.x), int(c.y)));
    settle_count([&] { return host.framesDrawn(); });
    QTest::mouseClick(&host, Qt::LeftButton, Qt::NoModifier, QPoint(int(c.x), int(c.y)));
    QVERIFY(wait_until([&] {
      host.requestFrame();
      return view.visible() && view.visible()->clusters.size() == 1 && !view.laying_out();
    }, 20000));
    settle_count([&] { return host.framesDrawn(); });
    int addmm = -1;
    for (size_t i = 0; i < view.visible()->nodes.size(); ++i)
      if (view.visible()->nodes[i].title == "AddmmBackward0" && view.visible()->nodes[i].parent == 0) addmm = int(i);
    QVERIFY(addmm >= 0);
    const rt::viz::Point h = view.node_screen_rect(addmm)->center();
    QTest::mouseMove(&host, QPoint(int(h.x), int(h.y)));
    settle_count([&] { return host.framesDrawn(); });
    QVERIFY(host.grabFramebuffer().save(artifacts_dir() + "/debugger-graph-hover.png", "PNG"));
    const double fitted = view.viewport().scale();
    const QPoint at(450, 300);
    QTest::mouseMove(&host, at);
    settle_count([&] { return host.framesDrawn(); });
    const rt::viz::Point under = view.viewport().to_graph({double(at.x()), double(at.y() - view.canvas_min().y)});
    QWheelEvent wheel(QPointF(at), QPointF(host.mapToGlobal(at)), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(&host, &wheel);
    QVERIFY(wait_until([&] { return view.viewport().scale() > fitted * 1.1; }, 5000));
    const rt::viz::Point still = view.viewport().to_graph({double(at.x()), double(at.y() - view.canvas_min().y)});
    QVERIFY(std::abs(still.x - under.x) < 2 && std::abs(still.y - under.y) < 2);  // zoom about the mouse
    // Drag pans.
    const rt::viz::Point offset = view.viewport().offset();
    QTest::mousePress(&host, Qt::LeftButton, Qt::NoModifier, at);
    for (int i = 1; i <= 8; ++i) {
      QTest::mouseMove(&host, at + QPoint(10 * i, 5 * i));
      settle_count([&] { return host.framesDrawn(); }, 30, 500);
    }
    QTest::mouseRelease(&host, Qt::LeftButton, Qt::NoModifier, at + QPoint(80, 40));
    QVERIFY(wait_until([&] { return view.viewport().offset().x > offset.x + 40; }, 5000));
    // F fits again.
    host.setFocus();
    QTest::keyClick(&host, Qt::Key_F);
    QVERIFY(wait_until([&] { return std::abs(view.viewport().scale() - fitted) < 1e-9; }, 5000));
    session->arm(false);
  }

  void nan_breakpoint_pauses_and_the_toolbar_steps_and_continues() {
    auto session = std::make_shared<DebuggerSession>();
    DebuggerWidget w(session);
    w.resize(1400, 520);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    // Breakpoints from the list's controls: NaN/Inf is added, an empty op name is refused with a message.
    w.breakpointKind()->setCurrentIndex(0);
    QTest::mouseClick(w.addButton(), Qt::LeftButton);
    QCOMPARE(w.breakpointList()->topLevelItemCount(), 1);
    w.breakpointKind()->setCurrentIndex(1);
    w.breakpointPattern()->clear();
    QTest::mouseClick(w.addButton(), Qt::LeftButton);
    QCOMPARE(w.breakpointList()->topLevelItemCount(), 1);
    QVERIFY(!w.errorLabel()->text().isEmpty());
    QVERIFY(!w.action(DebuggerWidget::Step)->isEnabled());

    w.action(DebuggerWidget::Arm)->trigger();
    QVERIFY(session->armed());
    rt::manual_seed(3);
    auto mlp = std::make_shared<Mlp>();
    rt::Tensor loss = nan_loss(*mlp, rt::randn({8, 6}));  // armed before the forward: nodes carry ops
    BackwardThread bw(*session, loss);
    QVERIFY(wait_for(*session, [&] { return session->status().paused.has_value(); }));
    const dbg::PausedState p = *session->status().paused;
    QCOMPARE(QString::fromStdString(p.node.name), QStringLiteral("SqrtBackward0"));
    QCOMPARE(QString::fromStdString(p.node.forward_op), QStringLiteral("sqrt"));
    QCOMPARE(p.phase, dbg::PausePhase::AfterNode);
    QCOMPARE(p.reason, dbg::PauseReason::Breakpoint);
    QVERIFY(p.grad_inputs.at(0).nan_count > 0);
    QVERIFY(w.action(DebuggerWidget::Step)->isEnabled());
    QVERIFY(w.action(DebuggerWidget::Stop)->isEnabled());
    QVERIFY(!w.action(DebuggerWidget::Pause)->isEnabled());
    QCOMPARE(w.breakpointList()->topLevelItem(0)->text(1), QStringLiteral("1"));

    // The whole panel, and its gradient view alone.
    settle_count([&] { return w.host()->framesDrawn(); });
    QVERIFY(w.grab().save(artifacts_dir() + "/debugger-panel.png", "PNG"));
    DebuggerContent content(session);
    const QImage view = render(content, {1300, 420});
    QVERIFY(view.save(artifacts_dir() + "/debugger-gradients.png", "PNG"));
    const auto& layout = content.view().layout();
    QCOMPARE(layout.rows.size(), p.grad_outputs.size() + p.grad_inputs.size());
    QCOMPARE(layout.order_entries, p.order.size());
    bool checked_nan = false;
    for (const auto& row : layout.rows) {
      const auto& g = row.produced ? p.grad_inputs[row.index] : p.grad_outputs[row.index];
      const int red = count_red(view, to_rect(row.nan_min, row.nan_max));
      if (g.nan_count > 0) {
        QVERIFY2(red > 5, qPrintable(QString::number(red)));
        checked_nan = true;
        // a histogram of the finite values
        QVERIFY(count_color(view, to_rect(row.hist_min, row.hist_max), QColor(90, 170, 255), 40) > 20);
      } else {
        QCOMPARE(red, 0);
      }
    }
    QVERIFY(checked_nan);
    // The header band is the "paused on a non-finite value" red, with the node's name in white.
    QVERIFY(count_color(view, to_rect(layout.header_min, layout.header_max), QColor(110, 34, 30), 2) > 2000);
    // Antialiased DejaVu strokes: few pixels reach full white, hundreds pass 200.
    QVERIFY(count_bright(view, to_rect(layout.header_min, layout.header_max), 200) > 100);

    // The graph panel highlights the paused node.
    GraphContent graph(session);
    const QImage gimg = render(graph, {1100, 640}, [&] { return graph.view().laying_out() || !graph.view().layout(); });
    QVERIFY(gimg.save(artifacts_dir() + "/debugger-graph.png", "PNG"));
    const auto& gv = graph.view();
    QVERIFY(gv.layout() && gv.visible());
    QVERIFY(gv.highlight().node >= 0);
    const auto& hn = gv.visible()->nodes[size_t(gv.highlight().node)];
    QCOMPARE(QString::fromStdString(hn.title), QStringLiteral("SqrtBackward0"));
    QVERIFY(!gv.highlight().in_edges.empty() || !gv.highlight().out_edges.empty());
    const rt::viz::Rect r = *gv.node_screen_rect(gv.highlight().node);
    const QRect around(int(r.x) - 5, int(r.y) - 5, int(r.w) + 10, int(r.h) + 10);
    QVERIFY(count_color(gimg, around, QColor(255, 196, 40), 10) > 40);
    QCOMPARE(count_color(gimg, QRect(0, 0, 40, gimg.height()), QColor(255, 196, 40), 10), 0);  // only there

    // Step (F11's action): run SqrtBackward0's successor up to its start.
    w.action(DebuggerWidget::Step)->trigger();
    QVERIFY(wait_for(*session, [&] { return session->status().paused && session->status().paused->index == p.index + 1; }));
    QCOMPARE(session->status().paused->reason, dbg::PauseReason::Step);
    QCOMPARE(session->status().paused->phase, dbg::PausePhase::BeforeNode);
    // Continue (F5): NaN merely passed along fires nothing more, so the backward ends.
    w.action(DebuggerWidget::Continue)->trigger();
    QVERIFY(wait_for(*session, [&] { return bw.done() && !session->status().running; }));
    bw.join();
    QVERIFY(!bw.error());
    QVERIFY(!w.action(DebuggerWidget::Step)->isEnabled());
    QVERIFY(session->status().message.find("finished") != std::string::npos);
    // One grad-norm step from the graph's parameters; NaN norms count as exploding.
    QCOMPARE(session->grad_norms().steps().size(), size_t(1));
    QCOMPARE(session->grad_norms().steps()[0].params.size(), size_t(4));
    QVERIFY(!session->grad_norms().steps()[0].exploding().empty());
    w.action(DebuggerWidget::Arm)->trigger();
    QVERIFY(!session->armed());
  }

  void stop_raises_backward_stopped_and_the_graph_expands() {
    auto session = std::make_shared<DebuggerSession>();
    DebuggerWidget w(session);
    w.resize(1200, 480);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.action(DebuggerWidget::PauseAtStart)->trigger();
    w.action(DebuggerWidget::Arm)->trigger();
    rt::manual_seed(5);
    auto net = std::make_shared<TinyConv>();
    rt::Tensor loss = rt::mse_loss((*net)(rt::randn({2, 1, 6, 6})), rt::randn({2, 3}));
    BackwardThread bw(*session, loss);
    QVERIFY(wait_for(*session, [&] { return session->status().paused.has_value(); }));
    QCOMPARE(session->status().paused->reason, dbg::PauseReason::Start);
    QCOMPARE(session->status().paused->index, size_t(0));

    // The graph: the conv1 and fc modules start collapsed; expand, collapse and search change what is shown.
    GraphContent graph(session);
    auto busy = [&] { return graph.view().laying_out() || !graph.view().layout(); };
    render(graph, {1000, 600}, busy);
    auto model = session->graph();
    QVERIFY(model && !model->empty());
    const int fc = model->find_cluster("fc");
    const int conv = model->find_cluster("conv1");
    QVERIFY(fc > 0 && conv > 0);
    auto shows_collapsed = [&] {
      for (const auto& n : graph.view().visible()->nodes)
        if (n.kind == rt::viz::VisibleKind::Cluster) return true;
      return false;
    };
    QVERIFY(shows_collapsed());
    graph.view().expand(fc);
    graph.view().expand(conv);
    const QImage expanded = render(graph, {1000, 600}, busy);
    QVERIFY(expanded.save(artifacts_dir() + "/debugger-graph-conv.png", "PNG"));
    QVERIFY(!shows_collapsed());
    // Refitted to the grown graph: the highlighted loss node is in view.
    const rt::viz::Rect hl = *graph.view().node_screen_rect(graph.view().highlight().node);
    QVERIFY(hl.y >= 0 && hl.bottom() <= expanded.height() && hl.x >= 0 && hl.right() <= expanded.width());
    QCOMPARE(graph.view().visible()->clusters.size(), size_t(2));
    for (const auto& c : graph.view().layout()->clusters) QVERIFY(graph.view().layout()->bounds.contains(c.box, 1));
    graph.view().collapse(fc);
    render(graph, {1000, 600}, busy);
    QCOMPARE(graph.view().visible()->clusters.size(), size_t(1));
    QVERIFY(graph.view().search("addmm") > 0);  // the fc's AddmmBackward0: fc is revealed again
    render(graph, {1000, 600}, busy);
    QCOMPARE(graph.view().visible()->clusters.size(), size_t(2));
    QVERIFY(graph.view().selected_node().has_value());

    // Step over module (F10) from the top-level loss: pauses at the first node inside fc.
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    QTest::keyClick(&w, Qt::Key_F10);
    QVERIFY(wait_for(*session, [&] { return session->status().paused && session->status().paused->index > 0; }));
    QCOMPARE(QString::fromStdString(session->status().paused->node.module), QStringLiteral("fc"));
    // Run to selected: the node found by the graph's search box (passed on by the graph panel's next frame).
    QVERIFY(graph.view().search("convolution") == 1);
    render(graph, {1000, 600}, busy);
    const uint64_t conv_id = model->op(model->find_op(*graph.view().selected_node())).id;
    QCOMPARE(session->selected_node(), std::optional<uint64_t>(conv_id));
    QVERIFY(w.action(DebuggerWidget::RunToSelected)->isEnabled());
    w.action(DebuggerWidget::RunToSelected)->trigger();
    QVERIFY(wait_for(*session, [&] { return session->status().paused && session->status().paused->node.id == conv_id; }));
    QCOMPARE(session->status().paused->reason, dbg::PauseReason::RunToNode);
    QCOMPARE(QString::fromStdString(session->status().paused->node.module), QStringLiteral("conv1"));
    // Stop (Shift+F5): the backward thread gets BackwardStopped; no grad-norm step is recorded.
    QTest::keyClick(&w, Qt::Key_F5, Qt::ShiftModifier);
    QVERIFY(wait_for(*session, [&] { return bw.done() && !session->status().running; }));
    bw.join();
    QVERIFY(bw.error());
    bool stopped = false;
    try {
      std::rethrow_exception(bw.error());
    } catch (const dbg::BackwardStopped&) {
      stopped = true;
    } catch (...) {
    }
    QVERIFY(stopped);
    QVERIFY(session->status().message.find("stopped") != std::string::npos);
    QCOMPARE(session->grad_norms().steps().size(), size_t(0));
    session->arm(false);
  }

  void the_kernel_interrupt_ends_a_paused_backward() {
    auto session = std::make_shared<DebuggerSession>();
    session->set_pause_at_start(true);
    session->arm(true);
    rt::manual_seed(2);
    auto mlp = std::make_shared<Mlp>();
    rt::Tensor loss = rt::mse_loss((*mlp)(rt::randn({4, 6})), rt::randn({4, 4}));
    BackwardThread bw(*session, loss);
    QVERIFY(wait_for(*session, [&] { return session->status().paused.has_value(); }));
    rt::CancelToken interpreter = bw.cancel_token();
    interpreter.request();  // what the studio's interrupt does to the interpreter thread
    QVERIFY(wait_for(*session, [&] { return bw.done() && !session->status().running; }));
    QVERIFY(!interpreter.requested());  // used up by the InterruptedError
    QVERIFY(!rt::cancel_requested());   // this thread was never asked
    bw.join();
    bool interrupted = false;
    try {
      std::rethrow_exception(bw.error());
    } catch (const rt::InterruptedError&) {
      interrupted = true;
    } catch (...) {
    }
    QVERIFY(interrupted);
    QCOMPARE(session->grad_norms().steps().size(), size_t(0));
    session->arm(false);
  }

  void grad_norm_chart_flags_vanishing_and_exploding_parameters() {
    auto session = std::make_shared<DebuggerSession>();
    session->arm(true);
    rt::manual_seed(11);
    auto mlp = std::make_shared<Mlp>();
    rt::Tensor probe = rt::randn({6}).requires_grad_();
    auto named = mlp->named_parameters();
    named.emplace_back("probe", probe);
    session->set_named_parameters(named);
    const rt::Tensor x = rt::randn({8, 6}), y = rt::randn({8, 4});
    rt::TensorList params = mlp->parameters();
    params.push_back(probe);
    rt::optim::SGD opt(params, rt::optim::SGDOptions{.lr = 0.01});
    for (int step = 0; step < 8; ++step) {
      opt.zero_grad();
      rt::Tensor fit = rt::mse_loss((*mlp)(x), y);
      if (step == 7) fit = fit * 1e6;  // a spike: every mlp parameter explodes
      rt::Tensor loss = fit + (probe * 1e-12).sum();  // probe's gradient stays ~1e-12: vanishing
      loss.backward();                   // no breakpoints: runs through on this thread
      opt.step();
    }
    QVERIFY(wait_for(*session, [&] { return session->grad_norms().steps().size() == 8; }, 10000));
    const auto& last = session->grad_norms().steps().back();
    const auto exploding = last.exploding();
    QVERIFY(std::find(exploding.begin(), exploding.end(), "fc1.weight") != exploding.end());
    const auto vanishing = last.vanishing();
    QCOMPARE(vanishing, std::vector<std::string>{"probe"});

    GradNormContent content(session);
    const QImage image = render(content, {1100, 420});
    QVERIFY(image.save(artifacts_dir() + "/debugger-grad-norms.png", "PNG"));
    const auto& layout = content.chart().layout();
    QCOMPARE(layout.steps, int64_t(8));
    QCOMPARE(layout.legend.size(), size_t(5));
    QVERIFY(layout.legend.front().exploding || layout.legend.front().vanishing);  // flagged first
    const QRect plot = to_rect(layout.plot_min, layout.plot_max);
    QVERIFY(count_color(image, plot, qcolor(rt::viz::draw::kExplodingColor), 10) > 20);
    QVERIFY(count_color(image, plot, qcolor(rt::viz::draw::kVanishingColor), 10) > 10);
    for (const auto& e : layout.legend) {
      const QRect row = to_rect(e.min, e.max);
      if (e.exploding) QVERIFY(count_color(image, row, qcolor(rt::viz::draw::kExplodingColor), 10) > 10);
      if (e.vanishing) QVERIFY(count_color(image, row, qcolor(rt::viz::draw::kVanishingColor), 10) > 10);
      QVERIFY(count_color(image, row, qcolor(e.color), 4) > 10);  // the swatch
    }
    session->arm(false);
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  DebuggerPanelsTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_debugger_panels.moc"
