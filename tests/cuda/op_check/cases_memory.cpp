// Copies and layout: contiguous/clone of strided views, cat/stack, dtype conversion on the device,
// host <-> device round trips of strided views, copy_ across devices, factories and random draws.
#include "cases.h"

namespace rt::op_check {
namespace {

constexpr ScalarType kAllTypes[] = {kFloat32, kFloat16, kBFloat16, kFloat64, kInt64, kInt32, kUInt8, kBool};

Tensor any_t(const Shape& s, ScalarType dt) { return is_floating(dt) ? randn_t(s, dt) : randint_t(0, dt == kBool ? 2 : 100, s, dt); }

void layouts(OpCheck& check) {
  for (ScalarType dt : kAllTypes) {
    const bool g = is_floating(dt);
    check.run({.op = "contiguous", .variant = "transposed", .inputs = {any_t({5, 7, 3}, dt)}, .grad = {g}, .tol = Tol::Exact,
               .fn = one([](const TensorList& in, Device) { return in[0].transpose(0, 2).contiguous(); })});
    check.run({.op = "clone", .inputs = {any_t({5, 7}, dt)}, .grad = {g}, .tol = Tol::Exact,
               .fn = one([](const TensorList& in, Device) { return in[0].clone(); })});
    check.run({.op = "cat", .variant = "dim=1", .inputs = {any_t({3, 2, 4}, dt), any_t({3, 5, 4}, dt)}, .grad = {g, g}, .tol = Tol::Exact,
               .fn = one([](const TensorList& in, Device) { return rt::cat({in[0], in[1]}, 1); })});
  }
  check.run({.op = "contiguous", .variant = "sliced step 2", .inputs = {randn_t({10, 9})}, .grad = {true}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return in[0].slice(0, 1, std::nullopt, 2).slice(1, 0, 7, 3).contiguous(); })});
  // The copy is exact; its gradient sums over the 10 expanded copies, in another order on each device.
  check.run({.op = "contiguous", .variant = "expanded (stride 0)", .inputs = {randn_t({4, 1, 3})}, .grad = {true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return in[0].expand({2, 4, 5, 3}).contiguous(); })});
  check.run({.op = "contiguous", .variant = "permuted 4-D, 100k elements", .inputs = {randn_t({10, 20, 25, 20})}, .grad = {true},
             .tol = Tol::Exact, .fn = one([](const TensorList& in, Device) { return in[0].permute({3, 1, 0, 2}).contiguous(); })});
  check.run({.op = "cat", .variant = "dim=0, three, strided inputs", .inputs = {randn_t({4, 3}), randn_t({3, 2}), randn_t({1, 3})},
             .grad = {true, true, true}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::cat({in[0], in[1].t(), in[2]}, 0); })});
  check.run({.op = "cat", .variant = "mixed dtypes", .inputs = {randn_t({2, 3}, kFloat16), randn_t({2, 3}, kFloat32), randint_t(0, 5, {2, 3})},
             .grad = {true, true, false}, .tol = Tol::Pointwise,
             .fn = one([](const TensorList& in, Device) { return rt::cat({in[0], in[1], in[2]}, -1); })});
  check.run({.op = "stack", .variant = "dim=1", .inputs = {randn_t({4, 3}), randn_t({4, 3})}, .grad = {true, true}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::stack({in[0], in[1]}, 1); })});
  check.run({.op = "repeat", .inputs = {randn_t({2, 3})}, .grad = {true}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return in[0].repeat({2, 1, 3}); })});
  for (int64_t k : {0, 1, -1}) {
    check.run({.op = "tril", .variant = "diagonal=" + std::to_string(k), .inputs = {randn_t({2, 5, 6})}, .grad = {true}, .tol = Tol::Exact,
               .fn = one([k](const TensorList& in, Device) { return in[0].tril(k); })});
    check.run({.op = "triu", .variant = "diagonal=" + std::to_string(k), .inputs = {randn_t({6, 5})}, .grad = {true}, .tol = Tol::Exact,
               .fn = one([k](const TensorList& in, Device) { return in[0].triu(k); })});
  }
  check.run({.op = "chunk", .variant = "views then math", .inputs = {randn_t({6, 9})}, .grad = {true},
             .fn = [](const TensorList& in, Device) {
               TensorList parts = in[0].chunk(3, 1);
               return TensorList{parts[0] * parts[2] + parts[1]};
             }});
}

void conversions(OpCheck& check) {
  // to(dtype) on the device: float <-> half, float -> int truncation, int -> bool, bool -> float.
  for (ScalarType from : kAllTypes)
    for (ScalarType to : kAllTypes) {
      if (from == to) continue;
      Tensor x = is_floating(from) ? (randn_t({6, 7}) * 40).to(from) : any_t({6, 7}, from);
      if (is_floating(from) && !is_floating(to) && to != kBool) x = rt::abs(x);  // in range for uint8 too
      const bool narrowing = is_floating(from) && is_floating(to) && element_size(to) < element_size(from);
      check.run({.op = "to", .variant = std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)), .inputs = {x},
                 .grad = {is_floating(from) && is_floating(to)}, .tol = narrowing ? Tol::Pointwise : Tol::Exact,
                 .fn = one([to](const TensorList& in, Device) { return in[0].to(to); })});
    }
  check.run({.op = "to", .variant = "float32 -> float16 transposed", .inputs = {randn_t({5, 8})}, .grad = {true},
             .fn = one([](const TensorList& in, Device) { return in[0].t().to(kFloat16); })});
  check.run({.op = "to", .variant = "float32 -> float16 overflow to inf", .inputs = {uniform_t({16}, 7e4, 1e5)},
             .fn = one([](const TensorList& in, Device) { return in[0].to(kFloat16); })});
}

void transfers(OpCheck& check) {
  // H2D and D2H of strided views: the bytes arrive in the view's logical order.
  check.run({.op = "to(device)", .variant = "round trip of a transposed slice", .inputs = {randn_t({9, 12})}, .tol = Tol::Exact,
             .host_outputs = true, .fn = [](const TensorList& in, Device d) {
               Tensor host = in[0].cpu().t().narrow(0, 2, 7);      // strided host view
               Tensor on_device = host.to(d);                      // H2D of a strided view
               Tensor back = on_device.t().cpu();                  // D2H of a strided device view
               return TensorList{back, in[0].slice(1, 1, std::nullopt, 3).cpu()};
             }});
  check.run({.op = "to(device)", .variant = "float16 round trip, step-2 view", .inputs = {randn_t({6, 10}, kFloat16)}, .tol = Tol::Exact,
             .host_outputs = true, .fn = [](const TensorList& in, Device d) {
               return TensorList{in[0].cpu().slice(1, 0, std::nullopt, 2).to(d).cpu()};
             }});
  check.run({.op = "to(device)", .variant = "autograd through copies", .inputs = {randn_t({4, 5})}, .grad = {true},
             .fn = one([](const TensorList& in, Device d) { return (in[0].cpu() * 3).to(d).exp(); })});
  check.run({.op = "copy_", .variant = "host -> strided device view", .inputs = {randn_t({6, 4})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device d) {
               Tensor dst = rt::zeros({4, 6}, TensorOptions(kFloat32).with_device(d));
               Tensor view = dst.t();
               view.copy_(in[0].cpu());
               return dst;
             })});
  check.run({.op = "copy_", .variant = "device -> host float16 with broadcast", .inputs = {randn_t({6})}, .tol = Tol::Pointwise,
             .host_outputs = true, .fn = one([](const TensorList& in, Device) {
               Tensor dst = rt::zeros({3, 6}, kFloat16);
               dst.copy_(in[0]);
               return dst;
             })});
  // copy_ broadcasts its source, from any device to any device (Python's x[1:3] = row goes through it).
  for (const char* from : {"host", "device"})
    check.run({.op = "copy_", .variant = std::string(from) + " -> device row and 0-dim broadcast", .inputs = {randn_t({6}), randn_t({})},
               .tol = Tol::Exact, .fn = one([host = std::string(from) == "host"](const TensorList& in, Device d) {
                 Tensor dst = rt::zeros({4, 6}, TensorOptions(kFloat32).with_device(d));
                 dst.slice(0, 1, 3).copy_(host ? in[0].cpu() : in[0]);
                 dst.slice(0, 3, 4).copy_(host ? in[1].cpu() : in[1]);
                 return dst;
               })});
  // A float32 sum (compared at float32's bound: the devices add the three values in different orders).
  check.run({.op = "item", .inputs = {randn_t({3})}, .tol = Tol::Reduction, .host_outputs = true,
             .fn = one([](const TensorList& in, Device) { return rt::scalar_tensor(in[0].sum().item<double>(), kFloat32); })});
}

void factories(OpCheck& check) {
  for (ScalarType dt : {kFloat32, kFloat16, kBFloat16, kFloat64, kInt64, kBool}) {
    const std::string n(dtype_name(dt));
    check.run({.op = "zeros", .variant = n, .tol = Tol::Exact,
               .fn = one([dt](const TensorList&, Device d) { return rt::zeros({3, 5}, TensorOptions(dt).with_device(d)); })});
    check.run({.op = "full", .variant = n, .tol = Tol::Exact,
               .fn = one([dt](const TensorList&, Device d) { return rt::full({7}, 1, TensorOptions(dt).with_device(d)); })});
    check.run({.op = "fill_", .variant = n, .inputs = {any_t({4, 4}, dt)}, .tol = Tol::Exact,
               .fn = one([](const TensorList& in, Device) { Tensor x = in[0].t(); x.fill_(0); return in[0]; })});
  }
  // Same seed, same counters: the GPU draws exactly the CPU's uniform numbers, and normal ones
  // up to the last bits of log/sqrt/cos.
  for (ScalarType dt : {kFloat32, kFloat16, kBFloat16, kFloat64}) {
    const std::string n(dtype_name(dt));
    check.run({.op = "rand", .variant = n, .tol = Tol::Exact,
               .fn = one([dt](const TensorList&, Device d) { return rt::rand({1001}, TensorOptions(dt).with_device(d)); })});
    check.run({.op = "randn", .variant = n, .tol = Tol::Pointwise,
               .fn = one([dt](const TensorList&, Device d) { return rt::randn({1001}, TensorOptions(dt).with_device(d)); })});
  }
  check.run({.op = "rand", .variant = "two draws, odd shape", .tol = Tol::Exact, .fn = [](const TensorList&, Device d) {
               const TensorOptions o = TensorOptions(kFloat32).with_device(d);
               return TensorList{rt::rand({3, 7, 5}, o), rt::rand({2}, o)};
             }});
  check.run({.op = "uniform_", .variant = "[-2, 3)", .tol = Tol::Exact, .fn = one([](const TensorList&, Device d) {
               Tensor t = rt::empty({64, 3}, TensorOptions(kFloat32).with_device(d));
               return rt::uniform_(t, -2, 3);
             })});
  check.run({.op = "normal_", .variant = "mean 5 std 0.5", .tol = Tol::Pointwise, .fn = one([](const TensorList&, Device d) {
               Tensor t = rt::empty({257}, TensorOptions(kFloat32).with_device(d));
               return rt::normal_(t, 5, 0.5);
             })});
  check.run({.op = "arange", .variant = "int64 and float32", .tol = Tol::Exact, .fn = [](const TensorList&, Device d) {
               return TensorList{rt::arange(10, TensorOptions(kInt64).with_device(d)),
                                 rt::arange(-1.0, 2.0, 0.25, TensorOptions(kFloat32).with_device(d))};
             }});
  check.run({.op = "randint", .variant = "[3, 17)", .tol = Tol::Exact,
             .fn = one([](const TensorList&, Device d) { return rt::randint(3, 17, {40}, TensorOptions(kInt64).with_device(d)); })});
  check.run({.op = "randn_like", .inputs = {randn_t({9, 9}, kFloat16)}, .tol = Tol::Pointwise,
             .fn = one([](const TensorList& in, Device) { return rt::randn_like(in[0]); })});
}

}  // namespace

void add_memory_cases(OpCheck& check) {
  layouts(check);
  conversions(check);
  transfers(check);
  factories(check);
}

}  // namespace rt::op_check
