// The text forms OpRecord uses for input shapes ("[[64, 784], [784, 10]]") and dtypes
// ("[float32, float32]"), and their JSON forms in PyTorch traces ("Input Dims" / "Input type").
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace rt::prof::trace {

// True when `text` is a JSON array of integers and nested arrays, so it can be written verbatim.
bool is_shape_list(std::string_view text);

// "[float32, int64]" -> {"float32", "int64"}; false when `text` is not such a bracketed list.
bool split_type_list(std::string_view text, std::vector<std::string_view>& items);

}  // namespace rt::prof::trace
