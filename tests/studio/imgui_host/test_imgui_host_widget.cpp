// ImGuiHostWidget on a real X server (run under `xvfb-run -a`, Mesa's software OpenGL): what a content draws
// reaches the screen (saved as <build>/test-artifacts/imgui-host-widget.png), synthesized Qt input reaches ImGui,
// frames are drawn only on demand, several hosts coexist, a failing content is reported and a host survives
// moving to another window. ctest runs it three times: as is, with QT_SCALE_FACTOR=2 (device pixel ratio 2:
// fonts, sizes and mouse coordinates scale) and with MESA_GL_VERSION_OVERRIDE=2.1 (the fallback message).
#include <QApplication>
#include <QClipboard>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalSpy>
#include <QWheelEvent>
#include <QWidget>
#include <QtTest>

#include <memory>

#include "imgui_host/imgui_host_widget.h"
#include "imgui_test_contents.h"

using namespace rt::studio;
using namespace rt::studio::test;

namespace {

constexpr unsigned int kRed = IM_COL32(230, 40, 20, 255);
constexpr unsigned int kBlue = IM_COL32(20, 60, 230, 255);

// Sends a wheel event at `pos` (logical pixels) with the given angle and pixel deltas.
void send_wheel(QWidget* widget, QPointF pos, QPoint angle, QPoint pixels = {}) {
  QWheelEvent event(pos, widget->mapToGlobal(pos), pixels, angle, Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase,
                    false);
  QApplication::sendEvent(widget, &event);
}

// <artifacts>/<base>.png, or <base>@2x.png when the display scales by 2 (the QT_SCALE_FACTOR=2 run).
QString artifact_path(const QString& base, const QWidget& widget) {
  const qreal ratio = widget.devicePixelRatioF();
  return artifacts_dir() + "/" + base + (ratio == 1.0 ? QString() : QString("@%1x").arg(ratio)) + ".png";
}

QPoint logical(const ImGuiHostWidget& host, QPointF device) { return (device / host.devicePixelRatioF()).toPoint(); }

// A shown host of 420x260 in its own window, settled (no frames pending).
struct ShownHost {
  QWidget window;
  ImGuiHostWidget* host;
  explicit ShownHost(std::unique_ptr<ImGuiContent> content) {
    auto* layout = new QHBoxLayout(&window);
    layout->setContentsMargins(0, 0, 0, 0);
    host = new ImGuiHostWidget(&window);
    host->setContent(std::move(content));
    layout->addWidget(host);
    window.resize(420, 260);
    window.show();
    window.activateWindow();
  }
  bool ready() {
    if (!QTest::qWaitForWindowExposed(&window)) return false;
    if (!QTest::qWaitForWindowActive(&window)) return false;
    if (!wait_until([&] { return host->framesDrawn() > 0; }, 10000)) return false;
    settle_count([&] { return host->framesDrawn(); });
    return true;
  }
};

}  // namespace

class ImGuiHostWidgetTest : public QObject {
  Q_OBJECT

 private slots:
  void draws_the_content_into_the_widget() {
    auto owned = std::make_unique<ShapesContent>(kRed);
    ShapesContent* shapes = owned.get();
    ShownHost shown(std::move(owned));
    QVERIFY(shown.ready());
    QVERIFY2(shown.host->glProblem().isEmpty(), qPrintable(shown.host->glProblem()));
    QVERIFY(shapes->frames > 0);
    const double scale = shown.host->devicePixelRatioF();
    QCOMPARE(shapes->scale, float(scale));
    QCOMPARE(shapes->font_size, float(kUiFontPixels * scale));
    QCOMPARE(shapes->size.x, float(std::lround(shown.host->width() * scale)));

    const QImage image = shown.host->grabFramebuffer();
    const QString path = artifact_path("imgui-host-widget", *shown.host);
    QVERIFY(image.save(path, "PNG"));
    qInfo("screenshot: %s (%dx%d)", qPrintable(path), image.width(), image.height());
    const QRect rect = ShapesContent::rect_device_pixels(scale);
    QCOMPARE(count_color(image, rect, QColor(230, 40, 20)), rect.width() * rect.height());
    // Just outside the rectangle: ImGui's dark window background, not red.
    QCOMPARE(count_color(image, rect.translated(0, rect.height() + 1).adjusted(0, 0, 0, -rect.height() + 4),
                         QColor(230, 40, 20)), 0);
    QVERIFY(count_color(image, QRect(0, 0, 10, 10), QColor(15, 15, 15), 3) == 100);
    // The circle's centre, and white glyph pixels in the text line (a 23-character line in DejaVu Sans has about
    // 150 brighter than 200 at scale 1).
    QCOMPARE(image.pixelColor(int(200 * scale), int(50 * scale)), QColor(40, 200, 60));
    const int glyph_pixels = count_bright(image, ShapesContent::text_band_device_pixels(scale));
    QVERIFY2(glyph_pixels > 100 * scale * scale, qPrintable(QString::number(glyph_pixels)));
  }

  void a_click_fires_an_imgui_button() {
    auto owned = std::make_unique<InteractiveContent>();
    InteractiveContent* ui = owned.get();
    ShownHost shown(std::move(owned));
    QVERIFY(shown.ready());
    const QPoint button = logical(*shown.host, ui->button_center());
    QTest::mouseMove(shown.host, button);
    QTest::mouseClick(shown.host, Qt::LeftButton, Qt::NoModifier, button);
    QVERIFY(wait_until([&] { return ui->clicks == 1; }, 5000));
    QTest::mouseClick(shown.host, Qt::RightButton, Qt::NoModifier, button);
    QVERIFY(wait_until([&] { return ui->right_clicks == 1; }, 5000));
    QCOMPARE(ui->clicks, 1);
    // A click outside the button does not fire it.
    QTest::mouseClick(shown.host, Qt::LeftButton, Qt::NoModifier, QPoint(300, 200));
    settle_count([&] { return shown.host->framesDrawn(); });
    QCOMPARE(ui->clicks, 1);
    // What Qt delivers for a double click: press, release, double-click (instead of the second press), release.
    // (QTest::mouseDClick alone sends only the middle event to a QWidget.)
    QTest::mouseClick(shown.host, Qt::LeftButton, Qt::NoModifier, button);
    QTest::mouseDClick(shown.host, Qt::LeftButton, Qt::NoModifier, button);
    QTest::mouseRelease(shown.host, Qt::LeftButton, Qt::NoModifier, button);
    QVERIFY(wait_until([&] { return ui->double_clicks == 1; }, 5000));
    QVERIFY(ui->clicks >= 2);
  }

  void the_wheel_reaches_imgui_with_fractions_and_both_axes() {
    auto owned = std::make_unique<InteractiveContent>();
    InteractiveContent* ui = owned.get();
    ShownHost shown(std::move(owned));
    QVERIFY(shown.ready());
    const QPointF at(200, 150);
    send_wheel(shown.host, at, QPoint(0, 120));
    QVERIFY(wait_until([&] { return ui->wheel == 1.0f; }, 5000));
    send_wheel(shown.host, at, QPoint(0, -30));  // a high-resolution wheel's quarter notch
    QVERIFY(wait_until([&] { return ui->wheel == 0.75f; }, 5000));
    send_wheel(shown.host, at, QPoint(-240, 0));
    QVERIFY(wait_until([&] { return ui->wheel_h == -2.0f; }, 5000));
    send_wheel(shown.host, at, QPoint(), QPoint(0, 20));  // a touchpad: pixels only
    QVERIFY(wait_until([&] { return ui->wheel == 1.25f; }, 5000));
  }

  void typing_into_an_input_text() {
    auto owned = std::make_unique<InteractiveContent>();
    InteractiveContent* ui = owned.get();
    ShownHost shown(std::move(owned));
    QVERIFY(shown.ready());
    const QPoint field = logical(*shown.host, ui->text_field_center());
    QTest::mouseClick(shown.host, Qt::LeftButton, Qt::NoModifier, field);
    QVERIFY(wait_until([&] { return ui->text_active; }, 5000));
    QVERIFY(shown.host->hasFocus());
    QTest::keyClicks(shown.host, "helloo");
    QTest::keyClick(shown.host, Qt::Key_Backspace);
    QVERIFY2(wait_until([&] { return ui->text() == "hello"; }, 5000), ui->text().c_str());
    // Ctrl+A selects everything (ImGuiKey_A with KeyCtrl), typing replaces it; UTF-8 text arrives whole.
    QTest::keyClick(shown.host, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(shown.host, "gr");
    for (const auto& [key, text] : {std::pair{Qt::Key_Udiaeresis, u"ü"}, std::pair{Qt::Key_ssharp, u"ß"}}) {
      QKeyEvent press(QEvent::KeyPress, key, Qt::NoModifier, QString::fromUtf16(text));
      QKeyEvent release(QEvent::KeyRelease, key, Qt::NoModifier, QString::fromUtf16(text));
      QApplication::sendEvent(shown.host, &press);
      QApplication::sendEvent(shown.host, &release);
    }
    QVERIFY2(wait_until([&] { return ui->text() == "grüß"; }, 5000), ui->text().c_str());
    QVERIFY(ui->ctrl_seen);
    // Copy and paste go through Qt's clipboard.
    QTest::keyClick(shown.host, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClick(shown.host, Qt::Key_C, Qt::ControlModifier);
    QVERIFY(wait_until([&] { return QGuiApplication::clipboard()->text() == QString::fromUtf8("grüß"); }, 5000));
    QGuiApplication::clipboard()->setText(QStringLiteral("pasted"));
    QTest::keyClick(shown.host, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClick(shown.host, Qt::Key_V, Qt::ControlModifier);
    QVERIFY2(wait_until([&] { return ui->text() == "pasted"; }, 5000), ui->text().c_str());
    // Keys held down (auto-repeat sends more presses) still type in order.
    QTest::keyClick(shown.host, Qt::Key_A, Qt::ControlModifier);
    QTest::keyPress(shown.host, Qt::Key_Z);
    QTest::keyPress(shown.host, Qt::Key_Z);
    QTest::keyRelease(shown.host, Qt::Key_Z);
    QTest::keyClick(shown.host, Qt::Key_Y);
    QTest::keyClick(shown.host, Qt::Key_Backspace);
    QTest::keyClick(shown.host, Qt::Key_W);
    QVERIFY2(wait_until([&] { return ui->text() == "zzw"; }, 5000), ui->text().c_str());
    settle_count([&] { return shown.host->framesDrawn(); });
    const QString path = artifact_path("imgui-host-interactive", *shown.host);
    QVERIFY(shown.host->grabFramebuffer().save(path, "PNG"));
    qInfo("screenshot: %s", qPrintable(path));
    // The I-beam follows ImGui's cursor over the text field.
    QTest::mouseMove(shown.host, field);
    QVERIFY(wait_until([&] { return shown.host->cursor().shape() == Qt::IBeamCursor; }, 5000));
    QTest::mouseMove(shown.host, QPoint(400, 240));
    QVERIFY(wait_until([&] { return shown.host->cursor().shape() == Qt::ArrowCursor; }, 5000));
    // Escape leaves the field; focus loss reaches ImGui without crashing.
    QTest::keyClick(shown.host, Qt::Key_Escape);
    QVERIFY(wait_until([&] { return !ui->text_active; }, 5000));
    shown.host->clearFocus();
    settle_count([&] { return shown.host->framesDrawn(); });
  }

  void idle_draws_no_frames() {
    auto owned = std::make_unique<InteractiveContent>();
    InteractiveContent* ui = owned.get();
    ShownHost shown(std::move(owned));
    QVERIFY(shown.ready());
    const auto idle = shown.host->framesDrawn();
    QTest::qWait(600);
    QCOMPARE(shown.host->framesDrawn(), idle);
    QCOMPARE(ui->frames, int(idle));

    shown.host->requestFrame();
    QVERIFY(wait_until([&] { return shown.host->framesDrawn() > idle; }, 5000));
    const auto after_request = settle_count([&] { return shown.host->framesDrawn(); });
    QTest::qWait(300);
    QCOMPARE(shown.host->framesDrawn(), after_request);

    // Live: frames keep coming without requests; then they stop again.
    shown.host->setLive(true);
    QVERIFY(wait_until([&] { return shown.host->framesDrawn() > after_request + 5; }, 5000));
    shown.host->setLive(false);
    const auto after_live = settle_count([&] { return shown.host->framesDrawn(); });
    QTest::qWait(300);
    QCOMPARE(shown.host->framesDrawn(), after_live);

    // The content's own wish for live updates works the same way.
    ui->live = true;
    shown.host->requestFrame();
    QVERIFY(wait_until([&] { return shown.host->framesDrawn() > after_live + 5; }, 5000));
    ui->live = false;
    const auto after_content_live = settle_count([&] { return shown.host->framesDrawn(); });
    QTest::qWait(300);
    QCOMPARE(shown.host->framesDrawn(), after_content_live);

    // A content that asks for a few more frames (a short animation) gets them, then the host is idle again.
    ui->animate_frames = 8;
    shown.host->requestFrame();
    QVERIFY(wait_until([&] { return ui->animate_frames == 0; }, 5000));
    const auto after_animation = settle_count([&] { return shown.host->framesDrawn(); });
    QVERIFY(after_animation >= after_content_live + 8);
    QTest::qWait(300);
    QCOMPARE(shown.host->framesDrawn(), after_animation);

    // Hidden live hosts draw nothing.
    shown.host->setLive(true);
    shown.window.hide();
    const auto hidden = settle_count([&] { return shown.host->framesDrawn(); });
    QTest::qWait(300);
    QCOMPARE(shown.host->framesDrawn(), hidden);
  }

  void two_hosts_coexist() {
    QWidget window;
    auto* layout = new QHBoxLayout(&window);
    auto* left = new ImGuiHostWidget(&window);
    auto* right = new ImGuiHostWidget(&window);
    auto red = std::make_unique<ShapesContent>(kRed);
    auto ui = std::make_unique<InteractiveContent>();
    InteractiveContent* right_ui = ui.get();
    left->setContent(std::move(red));
    right->setContent(std::move(ui));
    layout->addWidget(left);
    layout->addWidget(right);
    window.resize(840, 300);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(wait_until([&] { return left->framesDrawn() > 0 && right->framesDrawn() > 0; }, 10000));
    settle_count([&] { return left->framesDrawn() + right->framesDrawn(); });
    QVERIFY(left->imguiContext() != right->imguiContext());
    QCOMPARE(right_ui->context_seen, right->imguiContext());
    QCOMPARE(ImGui::GetCurrentContext(), nullptr);  // no context is left current between frames

    const auto left_frames = left->framesDrawn();
    const QPoint button = logical(*right, right_ui->button_center());
    QTest::mouseClick(right, Qt::LeftButton, Qt::NoModifier, button);
    QVERIFY(wait_until([&] { return right_ui->clicks == 1; }, 5000));
    settle_count([&] { return right->framesDrawn(); });
    QCOMPARE(left->framesDrawn(), left_frames);  // input to one host does not redraw the other

    // A third host in its own window, then one removed: the others keep drawing their own content.
    ShownHost blue(std::make_unique<ShapesContent>(kBlue));
    QVERIFY(blue.ready());
    delete right;
    left->requestFrame();
    QVERIFY(wait_until([&] { return left->framesDrawn() > left_frames; }, 5000));
    const QRect rect = ShapesContent::rect_device_pixels(left->devicePixelRatioF());
    QCOMPARE(count_color(left->grabFramebuffer(), rect, QColor(230, 40, 20)), rect.width() * rect.height());
    QCOMPARE(count_color(blue.host->grabFramebuffer(), rect, QColor(20, 60, 230)), rect.width() * rect.height());
  }

  void a_host_moved_to_another_window_keeps_drawing() {
    auto owned = std::make_unique<InteractiveContent>();
    InteractiveContent* ui = owned.get();
    ShownHost shown(std::move(owned));
    QVERIFY(shown.ready());
    QWidget other;
    other.resize(500, 300);
    auto* layout = new QHBoxLayout(&other);
    other.show();
    QVERIFY(QTest::qWaitForWindowExposed(&other));
    layout->addWidget(shown.host);  // reparenting: Qt gives the widget a new OpenGL context
    shown.host->show();
    const int before = ui->frames;
    QVERIFY(wait_until([&] { return ui->frames > before; }, 10000));
    settle_count([&] { return shown.host->framesDrawn(); });
    QVERIFY(shown.host->glProblem().isEmpty());
    const QPoint button = logical(*shown.host, ui->button_center());
    QTest::mouseClick(shown.host, Qt::LeftButton, Qt::NoModifier, button);
    QVERIFY(wait_until([&] { return ui->clicks == 1; }, 5000));
    const QImage image = shown.host->grabFramebuffer();
    QVERIFY(count_bright(image, QRect(QPoint(0, 0), image.size()), 200) > 50);  // button label, text
  }

  void a_failing_content_is_reported_and_recovers() {
    auto owned = std::make_unique<ThrowingContent>();
    ThrowingContent* content = owned.get();
    QWidget window;
    auto* layout = new QHBoxLayout(&window);
    auto* host = new ImGuiHostWidget(&window);
    QSignalSpy failed(host, &ImGuiHostWidget::contentFailed);
    host->setContent(std::move(owned));
    layout->addWidget(host);
    window.resize(400, 200);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(wait_until([&] { return failed.count() > 0; }, 10000));
    QVERIFY(failed.first().first().toString().contains("model snapshot is gone"));
    settle_count([&] { return host->framesDrawn(); });
    QCOMPARE(failed.count(), 1);  // reported once, not once per frame
    content->fail = false;
    const int before = content->frames;
    host->requestFrame();
    QVERIFY(wait_until([&] { return content->frames > before; }, 5000));
    QCOMPARE(ImGui::GetCurrentContext(), nullptr);
  }

  void the_fallback_message_names_the_problem() {
    // Run by ctest a second time with MESA_GL_VERSION_OVERRIDE=2.1 (see CMakeLists.txt): then the widget must
    // refuse to draw and say why. On a normal display it draws.
    const bool old_gl = qEnvironmentVariable("MESA_GL_VERSION_OVERRIDE").startsWith("2.");
    ShownHost shown(std::make_unique<ShapesContent>(kRed));
    QVERIFY(QTest::qWaitForWindowExposed(&shown.window));
    if (!old_gl) {
      QVERIFY(shown.ready());
      QVERIFY(shown.host->glProblem().isEmpty());
      QVERIFY(!shown.host->findChild<QLabel*>("imgui_host_problem"));
      return;
    }
    QVERIFY(wait_until([&] { return !shown.host->glProblem().isEmpty(); }, 10000));
    qInfo("fallback: %s", qPrintable(shown.host->glProblem()));
    QVERIFY(shown.host->glProblem().contains("OpenGL 3.0 or newer"));
    auto* label = shown.host->findChild<QLabel*>("imgui_host_problem");
    QVERIFY(label);
    QVERIFY(label->isVisible());
    QCOMPARE(label->text(), shown.host->glProblem());
    QCOMPARE(shown.host->framesDrawn(), 0u);
    const QString path = artifact_path("imgui-host-fallback", shown.window);
    QVERIFY(shown.window.grab().save(path, "PNG"));
    qInfo("screenshot: %s", qPrintable(path));
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  ImGuiHostWidgetTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_imgui_host_widget.moc"
