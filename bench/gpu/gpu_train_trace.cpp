// gpu_train_trace — trains two small models a few steps on the GPU under the profiler (CUPTI on),
// exports each session as a Chrome trace and checks that kernel events exist and are linked to the
// ops that launched them, in the session and in the exported file read back.
//
//   build/bin/gpu_train_trace --out out/gpu-check            # writes trace_mlp.json.gz and
//                                                            # trace_char_transformer.json.gz there
//   build/bin/gpu_train_trace --out DIR --mlp-steps 30 --gpt-steps 20
//   build/bin/gpu_train_trace --out DIR --cpu              # the same on the CPU: tests this program
//                                                            # without a GPU (no kernels: exit 1)
//
// Models (bench/gpu/gpu_models.h): the digits MLP (64-128-10, Adam, batch 64, samples/data/
// digits.csv.gz) and a GPT-style character model (2 blocks, d 128, 4 heads, context 64, AdamW,
// batch 32, samples/data/pride_and_prejudice.txt). Each prints its loss going down, the counts
// (ops, kernels, kernels linked to an op, copies) and the ops with the most kernel time.
// Exit status: 0 both traces hold kernels and at least 90% of them are linked to ops; 1 otherwise
// (or on an error: CUPTI not built or not usable, a failed step); 2 bad arguments; 77 no CUDA device.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu_models.h"
#include "rt/cuda.h"
#include "rt/prof/chrome_trace.h"
#include "rt/prof/cupti_collector.h"
#include "rt/prof/session.h"
#include "rt/rt.h"

namespace {

namespace prof = rt::prof;
rt::Device g_device = rt::Device::cuda(0);  // --cpu: Device::cpu()

struct LinkCounts {
  size_t ops = 0, kernels = 0, linked = 0, copies = 0;
  std::map<std::string, std::pair<size_t, double>> by_op;  // op name -> (kernels, kernel ms)
  std::map<std::string, size_t> unlinked;                  // kernel name -> count
};

LinkCounts count_links(const prof::SessionData& d) {
  LinkCounts c;
  std::unordered_map<uint64_t, prof::StringId> op_of;
  for (const prof::OpRecord& op : d.ops) {
    if (op.kind != prof::OpKind::Op) continue;
    ++c.ops;
    if (op.correlation_id) op_of.emplace(op.correlation_id, op.name);
  }
  for (const prof::GpuActivityRecord& g : d.gpu) {
    if (g.kind == prof::GpuActivityKind::Memcpy) ++c.copies;
    if (g.kind != prof::GpuActivityKind::Kernel) continue;
    ++c.kernels;
    auto it = g.external_id ? op_of.find(g.external_id) : op_of.end();
    if (it == op_of.end()) {
      ++c.unlinked[d.strings.at(g.name)];
      continue;
    }
    ++c.linked;
    auto& [n, ms] = c.by_op[d.strings.at(it->second)];
    ++n;
    ms += double(g.end_ns - g.start_ns) * 1e-6;
  }
  return c;
}

template <class Map, class Key>
std::vector<std::pair<std::string, typename Map::mapped_type>> top(const Map& m, Key key, size_t n) {
  std::vector<std::pair<std::string, typename Map::mapped_type>> v(m.begin(), m.end());
  std::sort(v.begin(), v.end(), [&](const auto& a, const auto& b) { return key(a.second) > key(b.second); });
  if (v.size() > n) v.resize(n);
  return v;
}

// Prints the counts; true when kernels exist and >= 90% are linked.
bool report(const std::string& what, const LinkCounts& c) {
  const double pct = c.kernels ? 100.0 * double(c.linked) / double(c.kernels) : 0.0;
  std::printf("  %s: %zu ops, %zu kernels, %zu linked to an op (%.1f%%), %zu memcpy\n", what.c_str(), c.ops,
              c.kernels, c.linked, pct, c.copies);
  return c.kernels > 0 && pct >= 90.0;
}

// Exports the session, reads the file back and checks both.
bool export_and_check(const prof::Session& s, const std::filesystem::path& path) {
  const prof::SessionData& d = s.data();
  bool ok = true;
  if (auto it = d.metadata.find("cupti"); it != d.metadata.end())
    std::printf("  metadata cupti: %s\n", it->second.c_str());
  if (d.dropped_records) std::printf("  dropped records: %llu\n", static_cast<unsigned long long>(d.dropped_records));
  const LinkCounts recorded = count_links(d);
  ok = report("session", recorded) && ok;
  if (!recorded.by_op.empty()) std::printf("  ops with the most kernel time:\n");
  for (const auto& [name, v] : top(recorded.by_op, [](const auto& x) { return x.second; }, 8))
    std::printf("    %-28s %5zu kernels %9.3f ms\n", name.c_str(), v.first, v.second);
  if (!recorded.unlinked.empty()) {
    std::printf("  kernels not linked to an op:\n");
    for (const auto& [name, n] : top(recorded.unlinked, [](size_t x) { return x; }, 5))
      std::printf("    %5zu x %.100s\n", n, name.c_str());
  }
  const prof::ChromeExportStats st = prof::export_chrome_trace(d, path);
  std::printf("  exported %s: %llu events, %.1f MB of JSON\n", path.string().c_str(),
              static_cast<unsigned long long>(st.events), double(st.bytes) / 1e6);
  const prof::ChromeImport back = prof::import_chrome_trace(path);
  ok = report("trace read back", count_links(back.session)) && ok;
  return ok;
}

// A started session recording GPU activity. When CUPTI cannot record (another profiler holds it, a
// sandbox refuses it), says why and records ops only, so the training still runs; the check fails.
bool g_cupti_failed = false;

std::unique_ptr<prof::Session> start_session(const std::string& name) {
  prof::SessionOptions o;
  o.record_shapes = o.profile_memory = o.with_stack = true;
  o.cupti = prof::CuptiMode::On;
  o.name = name;
  auto s = std::make_unique<prof::Session>(o);
  try {
    s->start();
    return s;
  } catch (const prof::CuptiUnavailableError& e) {
    std::printf("  error: CUPTI cannot record GPU activity: %s\n  (training on without it: no kernels in this trace)\n",
                e.what());
    g_cupti_failed = true;
  }
  o.cupti = prof::CuptiMode::Off;
  s = std::make_unique<prof::Session>(o);
  s->start();
  return s;
}

bool train_mlp(const std::filesystem::path& out, int steps) {
  std::printf("digits MLP 64-128-10, Adam, batch 64, %d steps\n", steps);
  rt::manual_seed(0);
  const rt::data::Digits digits = rt::data::load_digits();
  const rt::Tensor perm = rt::randperm(digits.images.size(0));
  const rt::Tensor x = (digits.images / 16.0).index_select(0, perm).to(g_device);
  const rt::Tensor y = digits.labels.index_select(0, perm).to(g_device);
  gpu_models::Mlp mlp({64, 128, 10}, g_device);
  rt::optim::Adam opt(mlp.parameters(), {.lr = 2e-3});
  constexpr int64_t batch = 64;
  const int64_t batches = x.size(0) / batch;
  const std::unique_ptr<prof::Session> session = start_session("gpu-check digits MLP");
  prof::Session& s = *session;
  double first = 0, last = 0;
  for (int i = 0; i < steps; ++i) {
    const int64_t off = (i % batches) * batch;
    opt.zero_grad();
    rt::Tensor loss = rt::cross_entropy(mlp.forward(x.narrow(0, off, batch)), y.narrow(0, off, batch));
    loss.backward();
    opt.step();
    last = loss.item<double>();
    if (i == 0) first = last;
    s.counter("loss", last);
    s.step();
  }
  s.stop();
  std::printf("  loss %.4f -> %.4f\n", first, last);
  const bool ok = export_and_check(s, out / "trace_mlp.json.gz");
  if (!(std::isfinite(last) && last < first)) {
    std::printf("  error: the loss did not go down\n");
    return false;
  }
  return ok;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw rt::Error("cannot read " + p.string());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool train_char_transformer(const std::filesystem::path& out, int steps) {
  const std::string text = read_text(rt::data::find_sample_data("pride_and_prejudice.txt"));
  std::vector<int> id_of(256, -1);
  int64_t vocab = 0;
  for (unsigned char ch : text)
    if (id_of[ch] < 0) id_of[ch] = 0;
  for (int& id : id_of)
    if (id == 0) id = int(vocab++);
  gpu_models::CharTransformerConfig cfg{.vocab = vocab};
  constexpr int64_t batch = 32;
  std::printf("char transformer (%lld blocks, d %lld, %lld heads, context %lld, vocab %lld), AdamW, batch %lld, %d steps\n",
              (long long)cfg.layers, (long long)cfg.d_model, (long long)cfg.heads, (long long)cfg.context,
              (long long)vocab, (long long)batch, steps);
  rt::manual_seed(0);
  gpu_models::CharTransformer gpt(cfg, g_device);
  rt::optim::AdamW opt(gpt.parameters(), {.lr = 3e-3});
  std::mt19937_64 rng(0);
  std::uniform_int_distribution<size_t> start(0, text.size() - size_t(cfg.context) - 2);
  const std::unique_ptr<prof::Session> session = start_session("gpu-check char transformer");
  prof::Session& s = *session;
  double first = 0, last = 0;
  std::vector<int64_t> tokens(size_t(batch * (cfg.context + 1)));
  for (int i = 0; i < steps; ++i) {
    for (int64_t b = 0; b < batch; ++b) {
      const size_t at = start(rng);
      for (int64_t t = 0; t <= cfg.context; ++t)
        tokens[size_t(b * (cfg.context + 1) + t)] = id_of[static_cast<unsigned char>(text[at + size_t(t)])];
    }
    const rt::Tensor batch_tokens = rt::from_vector(tokens, {batch, cfg.context + 1}).to(g_device);
    opt.zero_grad();
    rt::Tensor loss = gpt.loss(batch_tokens);
    loss.backward();
    opt.step();
    last = loss.item<double>();
    if (i == 0) first = last;
    s.counter("loss", last);
    s.step();
  }
  s.stop();
  std::printf("  loss %.4f -> %.4f\n", first, last);
  const bool ok = export_and_check(s, out / "trace_char_transformer.json.gz");
  if (!(std::isfinite(last) && last < first)) {
    std::printf("  error: the loss did not go down\n");
    return false;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path out;
  int mlp_steps = 30, gpt_steps = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "--mlp-steps" && i + 1 < argc) {
      mlp_steps = std::atoi(argv[++i]);
    } else if (a == "--gpt-steps" && i + 1 < argc) {
      gpt_steps = std::atoi(argv[++i]);
    } else if (a == "--cpu") {
      g_device = rt::Device::cpu();
    } else {
      std::fprintf(stderr, "usage: gpu_train_trace --out DIR [--mlp-steps N] [--gpt-steps N] [--cpu]\n");
      return 2;
    }
  }
  if (out.empty() || mlp_steps < 2 || gpt_steps < 2) {
    std::fprintf(stderr, "usage: gpu_train_trace --out DIR [--mlp-steps N>=2] [--gpt-steps N>=2] [--cpu]\n");
    return 2;
  }
  if (g_device.is_cuda() && !rt::cuda::is_available()) {
    std::printf("skipped: no CUDA device (%s)\n", rt::cuda::unavailable_reason().c_str());
    return 77;
  }
  if (!prof::cupti_built()) {
    std::printf("error: rt_profiler was built without CUPTI (no cupti.h / libcupti in the CUDA toolkit at "
                "configure time): no kernel events can be recorded; configure with -DRT_CUPTI=ON to see why\n");
    return 1;
  }
  std::filesystem::create_directories(out);
  bool ok = true;
  try {
    ok = train_mlp(out, mlp_steps) && ok;
    ok = train_char_transformer(out, gpt_steps) && ok;
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  ok = ok && !g_cupti_failed;
  std::printf(ok ? "ok: kernels recorded and linked to ops in both traces\n"
                 : "FAILED: see the counts above (kernels must exist and >= 90%% be linked to ops)\n");
  return ok ? 0 : 1;
}
