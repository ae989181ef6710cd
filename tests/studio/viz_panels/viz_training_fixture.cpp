#include "viz_training_fixture.h"

#include <QFile>

#include <set>

#include "imgui_test_contents.h"
#include "rt/prof/session.h"
#include "rt/prof/store.h"
#include "rt/rt.h"

namespace rt::studio::test {

std::shared_ptr<const prof::SessionData> record_mlp_training(const std::string& name, int steps, float lr) {
  rt::manual_seed(7);
  prof::SessionOptions options;
  options.record_shapes = true;
  options.profile_memory = true;
  options.with_stack = true;
  options.name = name;
  prof::Session session(options);
  session.start();
  // Built while recording, like a notebook cell that defines and trains a model: parameters show up too.
  auto net = std::make_shared<rt::nn::Sequential>(std::make_shared<rt::nn::Linear>(32, 64),
                                                  std::make_shared<rt::nn::ReLU>(),
                                                  std::make_shared<rt::nn::Linear>(64, 10));
  rt::optim::Adam opt(net->parameters(), rt::optim::AdamOptions{.lr = lr});
  const rt::Tensor x = rt::randn({64, 32});
  const rt::Tensor y = rt::randint(0, 10, {64});
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    rt::Tensor loss = rt::cross_entropy((*net)(x), y);
    loss.backward();
    opt.step();
    session.counter("loss", loss.item<double>());
    session.counter("lr", lr);
    session.step();
  }
  session.stop();
  return std::make_shared<const prof::SessionData>(session.data());
}

QString save_store(const QString& file_name, std::initializer_list<std::shared_ptr<const prof::SessionData>> sessions) {
  const QString path = artifacts_dir() + "/" + file_name;
  for (const char* suffix : {"", "-wal", "-shm"}) QFile::remove(path + suffix);
  prof::Store store = prof::Store::open(path.toStdString());
  for (const auto& s : sessions) store.save_session(*s);
  return path;
}

int distinct_colors(const QImage& image, const QRect& area) {
  std::set<int> colors;
  const QRect r = area.intersected(image.rect());
  for (int y = r.top(); y <= r.bottom(); ++y)
    for (int x = r.left(); x <= r.right(); ++x) {
      const QColor c = image.pixelColor(x, y);
      colors.insert((c.red() >> 4) << 8 | (c.green() >> 4) << 4 | (c.blue() >> 4));
    }
  return int(colors.size());
}

}  // namespace rt::studio::test
