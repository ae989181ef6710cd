// rt/plugin_host/op_schema.h — a plugin op's schema, in PyTorch's schema language (the subset abi.h's RtOpDef
// describes), parsed.
//
//   rt::plugin::OpSchema s = rt::plugin::parse_op_schema("fused_bias_gelu(Tensor x, Tensor b) -> Tensor");
//   s.name;                    // "fused_bias_gelu"
//   s.arguments[1].name;       // "b"
//   s.arguments[1].type;       // ArgType::Tensor
//   s.returns.size();          // 1
//   s.str();                   // the schema again, normalised
//
//   parse_op_schema("scale_(Tensor(a!) self, float alpha=1.0) -> Tensor(a)");  // writes self, returns it
//   parse_op_schema("split(Tensor x, int parts=2) -> (Tensor, Tensor)");
//
// The language: NAME "(" [ARG {"," ARG}] ")" "->" RESULTS, where
//   ARG     = TYPE NAME ["=" DEFAULT]      TYPE: Tensor, Tensor?, float, int, bool; a Tensor may carry an
//                                          annotation (a) or (a!): "(a!)" the op writes the argument
//   DEFAULT = a number, True/False, None (Tensor? only)
//   RESULTS = Tensor | Tensor(a) | "(" Tensor {"," Tensor} ")"  a result annotated (a) is the argument annotated
//                                          (a!) (or (a)) with the same letter, returned as is
// Names are letters, digits and '_' not starting with a digit. Every problem throws OpSchemaError naming the
// schema and the character where it went wrong:
//   "op schema 'f(Tensor x, floot y) -> Tensor': at column 17: unknown type 'floot' (expected Tensor, Tensor?,
//    float, int or bool)"
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rt::plugin {

class OpSchemaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ArgType { Tensor, OptionalTensor, Float, Int, Bool };
const char* arg_type_name(ArgType t);  // "Tensor", "Tensor?", "float", "int", "bool"

// A default value: None (Tensor? only), a float, an int or a bool.
using DefaultValue = std::variant<std::monostate, double, int64_t, bool>;

struct AliasInfo {
  char set = 0;        // 'a'..'z'; 0: no annotation
  bool write = false;  // "(a!)": the op writes this tensor
};

struct OpArgument {
  std::string name;
  ArgType type = ArgType::Tensor;
  AliasInfo alias;
  std::optional<DefaultValue> default_value;
};

struct OpReturn {
  AliasInfo alias;  // set: this result is the argument annotated with the same letter
};

struct OpSchema {
  std::string name;  // unqualified: "fused_bias_gelu"
  std::vector<OpArgument> arguments;
  std::vector<OpReturn> returns;
  bool tuple_returns = false;  // "-> (Tensor, Tensor)", also with one element

  // The argument index a result aliases, or -1.
  int aliased_argument(size_t result) const;
  // Indexes of the arguments the op writes ("(a!)").
  std::vector<size_t> mutated_arguments() const;
  size_t num_tensor_arguments() const;
  std::string str() const;  // "fused_bias_gelu(Tensor x, Tensor b) -> Tensor"
};

OpSchema parse_op_schema(std::string_view schema);  // throws OpSchemaError

}  // namespace rt::plugin
