#include "rt/nn/module.h"
#include "rt/viz/graph_model.h"

namespace rt::viz {

std::unordered_map<std::string, std::string> module_types_of(nn::Module& model) {
  std::unordered_map<std::string, std::string> types;
  for (const auto& [path, module] : model.named_modules())
    if (!path.empty()) types.emplace(path, module->name());
  return types;
}

}  // namespace rt::viz
