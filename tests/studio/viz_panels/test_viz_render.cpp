// The timeline, memory and scalars views of a real profiled training (a small MLP trained with Adam),
// drawn offscreen on a real X server (run under `xvfb-run -a`) and saved as
// <build>/test-artifacts/viz-{timeline,memory,scalars}*.png; each image is checked against what the view
// models say (tracks, the memory peak's column, the charts), and render_view_png's errors name the problem.
// Before Qt's headers: the generated-session fixture names a lambda `emit`, which Qt defines as a macro.
#include "test_timeline_fixtures.h"

#include <QGuiApplication>
#include <QImage>
#include <QtTest>

#include <algorithm>

#include "imgui_host/offscreen_render.h"
#include "imgui_test_contents.h"
#include "rt/error.h"
#include "rt/viz/draw/draw_style.h"
#include "rt/viz/memory_timeline.h"
#include "rt/viz/scalars.h"
#include "rt/viz/timeline_flows.h"
#include "viz_panels/render_view.h"
#include "viz_panels/session_view_content.h"
#include "viz_training_fixture.h"

using namespace rt::studio;
using namespace rt::studio::test;
namespace draw = rt::viz::draw;

namespace {

QImage render(SessionViewContent& content, QSize size, double scale = 1.0) {
  OffscreenRenderOptions options;
  options.size = size;
  options.scale = scale;
  options.frames = 4;
  return render_to_image(content, options);
}

}  // namespace

class VizRenderTest : public QObject {
  Q_OBJECT

  std::shared_ptr<const rt::prof::SessionData> training_;

 private slots:
  void initTestCase() { training_ = record_mlp_training("mlp adam", 6); }

  void timeline_shows_threads_ops_and_backward_nodes() {
    SessionViewContent content(VizView::Timeline, {training_});
    const QImage image = render(content, {1600, 700});
    QVERIFY(image.save(artifacts_dir() + "/viz-timeline.png", "PNG"));
    const draw::TimelineDraw& tl = *content.timeline();
    const draw::TimelineLayout& layout = tl.layout();
    // The step track and the main thread are on screen, in the model's order.
    QVERIFY(layout.tracks.size() >= 2);
    QCOMPARE(tl.model().tracks()[layout.tracks[0].track].id.kind, rt::viz::TrackKind::Steps);
    QCOMPARE(tl.model().tracks()[layout.tracks[1].track].id.kind, rt::viz::TrackKind::Thread);
    QCOMPARE(int(layout.canvas_max.x), 1600);
    // Everything is in the window at first: the view spans the whole session.
    QCOMPARE(tl.view().t0(), tl.model().first_ns());
    QCOMPARE(tl.view().t1(), tl.model().last_ns());
    // The thread track is full of colored op boxes; the gutter holds its name.
    const auto& thread = layout.tracks[1];
    const QRect ops = to_rect({layout.canvas_min.x, thread.top}, {layout.canvas_max.x, thread.top + thread.height});
    QVERIFY2(distinct_colors(image, ops) > 12, qPrintable(QString::number(distinct_colors(image, ops))));
    const QRect gutter = to_rect({0, thread.top}, {layout.gutter_width, thread.top + layout.row_height});
    QVERIFY(count_bright(image, gutter, 180) > 20);
    // Backward nodes carry a magenta top stripe that forward ops never have.
    QVERIFY(count_color(image, ops, qcolor(draw::palette::kBackwardFlow), 3) > 10);
    // The ruler has tick labels.
    const QRect ruler = to_rect({layout.canvas_min.x, layout.canvas_min.y - 20}, {layout.canvas_max.x, layout.canvas_min.y});
    QVERIFY(count_bright(image, ruler, 180) > 50);
  }

  void timeline_selection_search_and_range_statistics() {
    SessionViewContent content(VizView::Timeline, {training_});
    draw::TimelineDraw& tl = *content.timeline();
    tl.set_search("AddmmBackward");
    QVERIFY(tl.selected().has_value());
    QCOMPARE(QString::fromStdString(tl.model().name(*tl.selected())).left(13), QStringLiteral("AddmmBackward"));
    // A range around the selected node (a third of the session may hold no event when the machine stalls the
    // recording thread): it holds that node at least.
    const int64_t first = tl.model().first_ns(), last = tl.model().last_ns();
    const int64_t around = tl.model().start_ns(*tl.selected());
    tl.select_range(std::max(first, around - (last - first) / 6), std::min(last, around + (last - first) / 6));
    QVERIFY(!tl.range_rows().empty());
    const QImage image = render(content, {1600, 700});
    QVERIFY(image.save(artifacts_dir() + "/viz-timeline-selected.png", "PNG"));
    // The selection is centred: its start lies inside the window.
    const int64_t start = tl.model().start_ns(*tl.selected());
    QVERIFY(start >= tl.view().t0() && start <= tl.view().t1());
    // Searching zooms in to a match narrower than 2% of the window, so it is always a visible box.
    QVERIFY(tl.view().span_ns() <= 50 * (tl.model().end_ns(*tl.selected()) - start) + rt::viz::TimelineView::kMinSpanNs);
    // The details box (bottom left) and the range box (bottom right) are drawn over the tracks.
    const auto& layout = tl.layout();
    const QRect details = to_rect({layout.canvas_min.x + 10, layout.canvas_max.y - 60}, {layout.canvas_min.x + 300, layout.canvas_max.y - 10});
    QVERIFY(count_bright(image, details, 180) > 40);
    const QRect range = to_rect({layout.canvas_max.x - 300, layout.canvas_max.y - 60}, {layout.canvas_max.x - 10, layout.canvas_max.y - 10});
    QVERIFY(count_bright(image, range, 180) > 40);
  }

  void views_scale_with_the_device_pixel_ratio() {
    for (VizView view : {VizView::Timeline, VizView::Memory, VizView::Scalars}) {
      SessionViewContent content(view, {training_});
      const QImage image = render(content, {800, 360}, 2.0);
      QCOMPARE(image.size(), QSize(1600, 720));
      QVERIFY(image.save(artifacts_dir() + "/viz-" + view_name(view) + "@2x.png", "PNG"));
      QVERIFY(distinct_colors(image, image.rect()) > 15);
    }
    // Rows and the gutter are twice as tall and wide as at scale 1.
    SessionViewContent one(VizView::Timeline, {training_}), two(VizView::Timeline, {training_});
    render(one, {800, 360}, 1.0);
    render(two, {800, 360}, 2.0);
    QCOMPARE(two.timeline()->layout().row_height, 2 * one.timeline()->layout().row_height);
    QCOMPARE(two.timeline()->layout().gutter_width, 2 * one.timeline()->layout().gutter_width);
  }

  void memory_marks_the_peak_where_the_model_has_it() {
    SessionViewContent content(VizView::Memory, {training_});
    const QImage image = render(content, {1600, 600});
    QVERIFY(image.save(artifacts_dir() + "/viz-memory.png", "PNG"));
    const rt::viz::MemoryTimelineModel model(*training_);
    QCOMPARE(model.devices().size(), size_t(1));
    const rt::viz::DeviceMemory& cpu = model.devices().front();
    QVERIFY(cpu.peak.total > 0);
    // Parameters, gradients, activations and optimizer state were all live at the peak or before.
    QVERIFY(cpu.peak.bytes[size_t(rt::prof::MemoryCategoryId::Parameter)] > 0);
    const draw::MemoryLayout& layout = content.memory()->layout();
    QCOMPARE(layout.charts.size(), size_t(1));
    const auto& chart = layout.charts.front();
    QVERIFY(chart.peak_x.has_value());
    const rt::viz::TimelineView& view = content.memory()->view();
    const double expected = chart.plot_min.x + double(cpu.peak.time_ns - view.t0()) / double(view.span_ns()) *
                                                   double(chart.plot_max.x - chart.plot_min.x);
    QVERIFY2(std::abs(*chart.peak_x - expected) <= 1.0, qPrintable(QString("%1 vs %2").arg(*chart.peak_x).arg(expected)));
    // The dashed red marker is in that pixel column and in no column far from it.
    const int x = int(*chart.peak_x);
    const QRect column(x - 1, int(chart.plot_min.y), 3, int(chart.plot_max.y - chart.plot_min.y));
    const int red = count_color(image, column, qcolor(draw::palette::kPeak), 8);
    QVERIFY2(red > int(chart.plot_max.y - chart.plot_min.y) / 3, qPrintable(QString::number(red)));
    const int away = x > chart.plot_min.x + 200 ? x - 150 : x + 150;
    QCOMPARE(count_color(image, QRect(away - 1, int(chart.plot_min.y) + 30, 3, int(chart.plot_max.y - chart.plot_min.y) - 30),
                         qcolor(draw::palette::kPeak), 8), 0);
    // Each category with bytes is drawn in its color.
    const QRect plot = to_rect(chart.plot_min, chart.plot_max);
    for (auto c : {rt::prof::MemoryCategoryId::Parameter, rt::prof::MemoryCategoryId::Activation,
                   rt::prof::MemoryCategoryId::OptimizerState})
      QVERIFY2(count_color(image, plot, qcolor(draw::category_color(c)), 3) > 30, rt::viz::category_label(c));
    // With no mouse, the block list shows the peak.
    QCOMPARE(*layout.list_time_ns, cpu.peak.time_ns);
  }

  void timeline_and_memory_share_their_time_window() {
    auto cursor = std::make_shared<draw::TimeCursor>();
    SessionViewContent timeline(VizView::Timeline, {training_}, cursor);
    SessionViewContent memory(VizView::Memory, {training_}, cursor);
    render(timeline, {1200, 400});
    QCOMPARE(cursor->session, static_cast<const void*>(training_.get()));
    const int64_t first = timeline.timeline()->model().first_ns(), last = timeline.timeline()->model().last_ns();
    const int64_t t0 = first + (last - first) / 2, t1 = t0 + (last - first) / 4;
    timeline.timeline()->set_window(t0, t1);
    render(timeline, {1200, 400});
    render(memory, {1200, 400});
    QCOMPARE(memory.memory()->view().t0(), t0);
    QCOMPARE(memory.memory()->view().t1(), t1);
    // A view of another session leaves the cursor alone.
    auto other = record_mlp_training("other", 2);
    SessionViewContent unrelated(VizView::Memory, {other}, cursor);
    render(unrelated, {1200, 400});
    QCOMPARE(cursor->t0, t0);
    QCOMPARE(cursor->session, static_cast<const void*>(training_.get()));
  }

  void scalars_chart_every_counter_and_overlay_sessions() {
    auto second = record_mlp_training("mlp adam lr=3e-2", 6, 3e-2f);
    SessionViewContent content(VizView::Scalars, {training_, second});
    content.scalars()->set_smoothing(0.3);
    const QImage image = render(content, {1200, 500});
    QVERIFY(image.save(artifacts_dir() + "/viz-scalars.png", "PNG"));
    const draw::ScalarsLayout& layout = content.scalars()->layout();
    QCOMPARE(layout.charts.size(), size_t(2));
    QCOMPARE(QString::fromStdString(layout.charts[0].name), QStringLiteral("loss"));
    QCOMPARE(QString::fromStdString(layout.charts[1].name), QStringLiteral("lr"));
    // x runs over the steps 0..5; both sessions' lines are drawn in their colors.
    QCOMPARE(layout.charts[0].x0, 0.0);
    QCOMPARE(layout.charts[0].x1, 5.0);
    const QRect loss = to_rect(layout.charts[0].plot_min, layout.charts[0].plot_max);
    QVERIFY(count_color(image, loss, qcolor(draw::series_color(0)), 10) > 20);
    QVERIFY(count_color(image, loss, qcolor(draw::series_color(1)), 10) > 20);
  }

  void render_view_png_writes_the_file_and_names_problems() {
    const QString store = save_store("viz-render.sqlite", {training_});
    RenderViewRequest r;
    r.view = "memory";
    r.source = parse_store_argument(store.toStdString() + ":1");
    r.output = (artifacts_dir() + "/viz-render-memory.png").toStdString();
    r.size = QSize(1000, 400);
    QFile::remove(QString::fromStdString(r.output.string()));
    render_view_png(r);
    QImage saved(QString::fromStdString(r.output.string()));
    QCOMPARE(saved.size(), QSize(1000, 400));
    QVERIFY(distinct_colors(saved, saved.rect()) > 10);

    auto message = [](const RenderViewRequest& bad) {
      try {
        render_view_png(bad);
      } catch (const rt::Error& e) {
        return QString(e.what());
      }
      return QString();
    };
    RenderViewRequest bad = r;
    bad.view = "flamegraph";
    QVERIFY(message(bad).contains("unknown view 'flamegraph'"));
    bad = r;
    bad.source = parse_store_argument(store.toStdString() + ":42");
    const QString missing = message(bad);
    QVERIFY2(missing.contains("no session 42") && missing.contains("rtorch trace list"), qPrintable(missing));
    bad = r;
    bad.source = parse_store_argument("/nonexistent/runs.sqlite");
    QVERIFY(message(bad).contains("no such file"));
    bad = r;
    bad.source = SessionSource{};
    bad.source.kind = SessionSource::Kind::Trace;
    bad.source.path = (artifacts_dir() + "/viz-not-a-trace.json").toStdString();
    QFile junk(QString::fromStdString(bad.source.path.string()));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write("{\"traceEvents\": [ {\"ph\": ");
    junk.close();
    QVERIFY2(message(bad).contains("cannot read trace"), qPrintable(message(bad)));
    bad = r;
    bad.size = QSize(10, 10);
    QVERIFY(message(bad).contains("out of range"));
    QVERIFY_THROWS_EXCEPTION(rt::ValueError, parse_size("12by5"));
    QCOMPARE(parse_size("800x600"), QSize(800, 600));
  }

  void timeline_of_a_large_gpu_session_folds_links_launches_and_warns() {
    // A generated session (ops on two threads, kernels on two CUDA streams) plus one broken record.
    auto generated = rt::viz::fixtures::generate_session({.ops = 4000, .threads = 2, .launch_fraction = 0.3});
    rt::prof::SessionData d = *generated;
    d.name = "generated gpu";
    rt::prof::OpRecord broken = d.ops.front();
    broken.start_ns = d.ops.front().start_ns + 10;
    broken.end_ns = broken.start_ns - 5;
    d.ops.push_back(broken);
    auto data = std::make_shared<const rt::prof::SessionData>(std::move(d));
    SessionViewContent content(VizView::Timeline, {data});
    draw::TimelineDraw& tl = *content.timeline();
    QVERIFY(!tl.model().warnings().empty());
    // Select an op that launched a kernel and zoom so both ends of its arrow are in the window.
    const rt::viz::FlowIndex flows(tl.model());
    const auto launch = std::find_if(flows.all().begin(), flows.all().end(),
                                     [](const rt::viz::Flow& f) { return f.kind == rt::viz::FlowKind::Launch; });
    QVERIFY(launch != flows.all().end());
    tl.select(launch->from);
    const int64_t lo = std::min(launch->from_ns, launch->to_ns), hi = std::max(launch->from_ns, launch->to_ns);
    tl.set_window(lo - (hi - lo + 20000), hi + (hi - lo + 20000));
    const QImage image = render(content, {1600, 600});
    QVERIFY(image.save(artifacts_dir() + "/viz-timeline-gpu.png", "PNG"));
    const auto& layout = tl.layout();
    // The warnings banner sits above the ruler.
    QVERIFY(count_color(image, QRect(0, 0, 1600, int(layout.canvas_min.y)), qcolor(draw::palette::kWarning), 3) > 2000);
    // GPU stream tracks are on screen after the threads, and the launch arrow is drawn.
    int gpu_tracks = 0;
    for (const auto& row : layout.tracks) gpu_tracks += tl.model().tracks()[row.track].id.kind == rt::viz::TrackKind::GpuStream;
    QCOMPARE(gpu_tracks, 2);
    QVERIFY(count_color(image, image.rect(), qcolor(draw::palette::kLaunchFlow), 3) > 20);
    // Fully zoomed out, thousands of events fold into hatched blocks labelled with their counts.
    tl.fit_all();
    const QImage all = render(content, {1600, 600});
    QVERIFY(all.save(artifacts_dir() + "/viz-timeline-gpu-all.png", "PNG"));
    QVERIFY(count_color(all, image.rect(), qcolor(draw::palette::kFoldedHatch), 3) > 200);
  }

  void empty_session_says_so() {
    SessionViewContent content(VizView::Timeline, {std::make_shared<const rt::prof::SessionData>()});
    const QImage image = render(content, {600, 200});
    QVERIFY(image.save(artifacts_dir() + "/viz-timeline-empty.png", "PNG"));
    QVERIFY(count_bright(image, image.rect(), 120) > 100);  // the message
    // Only the background and the message's antialiased grey levels: no tracks, no ruler, no colored boxes.
    const int colors = distinct_colors(image, image.rect());
    QVERIFY2(colors < 60, qPrintable(QString::number(colors)));
  }
};

int main(int argc, char** argv) {
  QGuiApplication app(argc, argv);
  VizRenderTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_viz_render.moc"
