// rt/device.h — where a tensor's storage lives.
//
//   rt::Device d = rt::Device::cpu();
//   d.str();   // "cpu"  (a CUDA device will print "cuda:0")
#pragma once
#include <string>

#include "rt/export.h"

RT_API_BEGIN

namespace rt {

enum class DeviceType : uint8_t { CPU, CUDA };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  static Device cpu() { return {}; }
  static Device cuda(int i = 0) { return {DeviceType::CUDA, i}; }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  std::string str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }
  bool operator==(const Device&) const = default;
};

}  // namespace rt

RT_API_END
