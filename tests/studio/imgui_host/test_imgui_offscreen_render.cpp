// render_to_image on a real X server (run under `xvfb-run -a`): a content drawn without any window, at scale 1
// and 2, saved as <build>/test-artifacts/imgui-offscreen-render*.png and checked pixel by pixel; bad options and
// a failing content throw with the reason; the caller's OpenGL and ImGui contexts are left as they were.
#include <QFile>
#include <QGuiApplication>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QtTest>

#include "imgui_host/imgui_canvas.h"
#include "imgui_host/offscreen_render.h"
#include "imgui_test_contents.h"

using namespace rt::studio;
using namespace rt::studio::test;

class ImGuiOffscreenRenderTest : public QObject {
  Q_OBJECT

 private slots:
  void renders_shapes_and_text_at_scale_one() {
    ShapesContent shapes(IM_COL32(230, 40, 20, 255));
    OffscreenRenderOptions options;
    options.size = QSize(320, 160);
    options.frames = 2;
    const QImage image = render_to_image(shapes, options);
    QCOMPARE(image.size(), QSize(320, 160));
    QCOMPARE(image.format(), QImage::Format_RGBA8888);
    QCOMPARE(shapes.frames, 2);
    const QString path = artifacts_dir() + "/imgui-offscreen-render.png";
    QVERIFY(image.save(path, "PNG"));
    qInfo("image: %s", qPrintable(path));

    const QRect rect = ShapesContent::rect_device_pixels(1.0);
    QCOMPARE(count_color(image, rect, QColor(230, 40, 20)), rect.width() * rect.height());
    // One pixel around the rectangle is background, so it sits exactly where it was drawn (not flipped).
    QCOMPARE(count_color(image, rect.adjusted(-1, -1, 1, 1), QColor(230, 40, 20)), rect.width() * rect.height());
    QCOMPARE(image.pixelColor(0, 0), QColor(15, 15, 15));
    QCOMPARE(image.pixelColor(200, 50), QColor(40, 200, 60));
    // DejaVu's antialiased strokes: about 150 pixels brighter than 200 (ProggyClean had more).
    const int glyphs = count_bright(image, ShapesContent::text_band_device_pixels(1.0));
    QVERIFY2(glyphs > 100, qPrintable(QString::number(glyphs)));
    QCOMPARE(count_bright(image, QRect(0, 130, 320, 30)), 0);  // nothing below the text line
  }

  void scale_two_doubles_the_image_fonts_and_sizes() {
    ShapesContent shapes(IM_COL32(230, 40, 20, 255));
    OffscreenRenderOptions options;
    options.size = QSize(320, 160);
    options.scale = 2.0;
    const QImage image = render_to_image(shapes, options);
    QCOMPARE(image.size(), QSize(640, 320));
    QCOMPARE(image.devicePixelRatio(), 2.0);
    QCOMPARE(shapes.font_size, 2.0f * kUiFontPixels);
    QCOMPARE(QString::fromStdString(shapes.font_name), QStringLiteral("DejaVuSans.ttf, 28px"));
    QCOMPARE(shapes.size.x, 640.0f);
    QVERIFY(image.save(artifacts_dir() + "/imgui-offscreen-render@2x.png", "PNG"));
    const QRect rect = ShapesContent::rect_device_pixels(2.0);
    QCOMPARE(count_color(image, rect, QColor(230, 40, 20)), rect.width() * rect.height());
    // Twice the font size gives about four times the glyph pixels of scale 1.
    ShapesContent small(IM_COL32(230, 40, 20, 255));
    OffscreenRenderOptions one = options;
    one.scale = 1.0;
    const int small_glyphs = count_bright(render_to_image(small, one), ShapesContent::text_band_device_pixels(1.0));
    const int big_glyphs = count_bright(image, ShapesContent::text_band_device_pixels(2.0));
    QVERIFY2(big_glyphs > 3 * small_glyphs, qPrintable(QString("%1 vs %2").arg(big_glyphs).arg(small_glyphs)));
  }

  void draws_with_dejavu_sans_or_the_built_in_font() {
    QVERIFY2(QFile::exists(kDefaultUiFontPath), "DejaVu Sans is missing: install fonts-dejavu-core (scripts/setup.sh)");
    OffscreenRenderOptions options;
    options.size = QSize(320, 160);
    ShapesContent dejavu(IM_COL32(230, 40, 20, 255));
    const QImage with_ttf = render_to_image(dejavu, options);
    QCOMPARE(QString::fromStdString(dejavu.font_name), QStringLiteral("DejaVuSans.ttf, 14px"));
    QCOMPARE(dejavu.font_size, kUiFontPixels);
    // Without the file (or with a file that is no font) the built-in ProggyClean draws the same text.
    const QString junk = artifacts_dir() + "/not-a-font.ttf";
    {
      QFile file(junk);
      QVERIFY(file.open(QIODevice::WriteOnly));
      file.write(QByteArray(4096, 'x'));
    }
    for (const QString& path : {QStringLiteral("/nonexistent/DejaVuSans.ttf"), junk}) {
      ShapesContent builtin(IM_COL32(230, 40, 20, 255));
      options.font_file = path.toStdString();
      const QImage image = render_to_image(builtin, options);
      QVERIFY(image.save(artifacts_dir() + "/imgui-offscreen-render-builtin-font.png", "PNG"));
      QCOMPARE(QString::fromStdString(builtin.font_name), QStringLiteral("ProggyClean.ttf, 13px"));
      QCOMPARE(builtin.font_size, kFallbackFontPixels);
      const int glyphs = count_bright(image, ShapesContent::text_band_device_pixels(1.0));
      QVERIFY2(glyphs > 150, qPrintable(QString::number(glyphs)));
      // The two fonts draw the text differently.
      QVERIFY(image != with_ttf);
    }
  }

  void keeps_the_callers_contexts() {
    QOpenGLContext mine;
    QVERIFY(mine.create());
    QOffscreenSurface surface;
    surface.create();
    QVERIFY(mine.makeCurrent(&surface));
    ImGuiContext* caller = ImGui::CreateContext();
    ImGui::SetCurrentContext(caller);
    ShapesContent shapes(IM_COL32(230, 40, 20, 255));
    render_to_image(shapes, {});
    QCOMPARE(QOpenGLContext::currentContext(), &mine);
    QCOMPARE(ImGui::GetCurrentContext(), caller);
    ImGui::DestroyContext(caller);
    mine.doneCurrent();
  }

  void bad_options_and_failing_content_throw_with_the_reason() {
    ShapesContent shapes(IM_COL32(230, 40, 20, 255));
    OffscreenRenderOptions options;
    options.size = QSize(0, 100);
    QVERIFY_THROWS_EXCEPTION(ImGuiHostError, render_to_image(shapes, options));
    options.size = QSize(100, 100);
    options.frames = 0;
    QVERIFY_THROWS_EXCEPTION(ImGuiHostError, render_to_image(shapes, options));
    options.frames = 1;
    options.scale = -1;
    QVERIFY_THROWS_EXCEPTION(ImGuiHostError, render_to_image(shapes, options));
    QCOMPARE(shapes.frames, 0);

    ThrowingContent failing;
    try {
      render_to_image(failing, {});
      QFAIL("render_to_image returned although the content threw");
    } catch (const ImGuiHostError& e) {
      QVERIFY2(QString(e.what()).contains("model snapshot is gone"), e.what());
    }
    QCOMPARE(ImGui::GetCurrentContext(), nullptr);
  }
};

int main(int argc, char** argv) {
  QGuiApplication app(argc, argv);
  ImGuiOffscreenRenderTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_imgui_offscreen_render.moc"
