// The op schema parser (rt/plugin_host/op_schema.h): PyTorch's schema language subset, good and bad.
#include <catch2/catch.hpp>

#include "rt/plugin_host/op_registry.h"
#include "rt/plugin_host/op_schema.h"

using namespace rt::plugin;
using Catch::Matchers::Contains;

TEST_CASE("a plain schema parses into names, types and one result") {
  OpSchema s = parse_op_schema("fused_bias_gelu(Tensor x, Tensor b) -> Tensor");
  CHECK(s.name == "fused_bias_gelu");
  REQUIRE(s.arguments.size() == 2);
  CHECK(s.arguments[0].name == "x");
  CHECK(s.arguments[1].type == ArgType::Tensor);
  CHECK(s.returns.size() == 1);
  CHECK_FALSE(s.tuple_returns);
  CHECK(s.str() == "fused_bias_gelu(Tensor x, Tensor b) -> Tensor");
  CHECK(s.num_tensor_arguments() == 2);
}

TEST_CASE("every argument type, defaults and tuple results") {
  OpSchema s = parse_op_schema(
      "combine( Tensor x,Tensor? w=None, float alpha=1.5, int k=-2, bool negate=False, float eps=1e-5, float one=1 )"
      " -> (Tensor, Tensor)");
  REQUIRE(s.arguments.size() == 7);
  CHECK(s.arguments[1].type == ArgType::OptionalTensor);
  CHECK(std::holds_alternative<std::monostate>(*s.arguments[1].default_value));
  CHECK(std::get<double>(*s.arguments[2].default_value) == 1.5);
  CHECK(std::get<int64_t>(*s.arguments[3].default_value) == -2);
  CHECK(std::get<bool>(*s.arguments[4].default_value) == false);
  CHECK(std::get<double>(*s.arguments[5].default_value) == 1e-5);
  CHECK(std::get<double>(*s.arguments[6].default_value) == 1.0);  // an int literal for a float
  CHECK(s.tuple_returns);
  CHECK(s.returns.size() == 2);
  CHECK(s.num_tensor_arguments() == 2);
  // str() writes the schema back normalised; it parses to the same thing.
  CHECK(s.str() ==
        "combine(Tensor x, Tensor? w=None, float alpha=1.5, int k=-2, bool negate=False, float eps=1e-05, "
        "float one=1.0) -> (Tensor, Tensor)");
  CHECK(parse_op_schema(s.str()).str() == s.str());
}

TEST_CASE("mutation and alias annotations") {
  OpSchema s = parse_op_schema("scale_(Tensor(a!) self, float alpha=2.0) -> Tensor(a)");
  CHECK(s.arguments[0].alias.set == 'a');
  CHECK(s.arguments[0].alias.write);
  CHECK(s.returns[0].alias.set == 'a');
  CHECK(s.aliased_argument(0) == 0);
  CHECK(s.mutated_arguments() == std::vector<size_t>{0});
  CHECK(s.str() == "scale_(Tensor(a!) self, float alpha=2.0) -> Tensor(a)");

  OpSchema v = parse_op_schema("view_of(Tensor(b) x) -> Tensor(b)");
  CHECK_FALSE(v.arguments[0].alias.write);
  CHECK(v.aliased_argument(0) == 0);
  CHECK(v.mutated_arguments().empty());

  OpSchema n = parse_op_schema("zero_(Tensor(a!) x) -> ()");
  CHECK(n.returns.empty());
  CHECK(n.tuple_returns);
  CHECK(parse_op_schema("no_args() -> Tensor").arguments.empty());
  CHECK(parse_op_schema("named(Tensor x) -> (Tensor values, Tensor indices)").returns.size() == 2);
}

TEST_CASE("bad schemas name the schema, the column and the problem") {
  auto error_of = [](const char* schema) {
    try {
      parse_op_schema(schema);
    } catch (const OpSchemaError& e) {
      return std::string(e.what());
    }
    FAIL("parsed: " << schema);
    return std::string();
  };
  CHECK_THAT(error_of("f(Tensor x, floot y) -> Tensor"),
             Contains("op schema 'f(Tensor x, floot y) -> Tensor'") && Contains("at column 13") &&
                 Contains("unknown type 'floot'"));
  CHECK_THAT(error_of("f(Tensor x) Tensor"), Contains("expected '->'"));
  CHECK_THAT(error_of("f(Tensor x -> Tensor"), Contains("expected ')'"));
  CHECK_THAT(error_of("1f(Tensor x) -> Tensor"), Contains("the op's name"));
  CHECK_THAT(error_of("f(Tensor x, Tensor x) -> Tensor"), Contains("argument 'x' is declared twice"));
  CHECK_THAT(error_of("f(Tensor x=None) -> Tensor"), Contains("cannot have a default; declare it Tensor?"));
  CHECK_THAT(error_of("f(Tensor? x=0) -> Tensor"), Contains("default '0' of 'x' is not None"));
  CHECK_THAT(error_of("f(int k=1.5) -> Tensor"), Contains("default '1.5' of 'k' is not an integer"));
  CHECK_THAT(error_of("f(bool b=true) -> Tensor"), Contains("is not True or False"));
  CHECK_THAT(error_of("f(float a=x) -> Tensor"), Contains("is not a number"));
  CHECK_THAT(error_of("f(float a=1.0, Tensor x) -> Tensor"), Contains("'x' has no default but follows 'a'"));
  CHECK_THAT(error_of("f(Tensor x) -> Tensor(a)"), Contains("result alias set 'a' names no argument"));
  CHECK_THAT(error_of("f(Tensor(A!) x) -> Tensor"), Contains("expected an alias set, a lowercase letter"));
  CHECK_THAT(error_of("f(Tensor(a!)? x) -> Tensor"), Contains("an optional tensor cannot carry an alias"));
  CHECK_THAT(error_of("f(Tensor(a!) x, Tensor(a) y) -> Tensor"), Contains("share alias set 'a'"));
  CHECK_THAT(error_of("f(Tensor x) -> float"), Contains("results must be Tensor (got 'float')"));
  CHECK_THAT(error_of("f(Tensor x) -> Tensor extra"), Contains("unexpected 'extra' after the results"));
  CHECK_THAT(error_of("f(Tensor x) -> Tensor, Tensor"), Contains("write several results as (Tensor, Tensor)"));
  CHECK_THAT(error_of("f(Tensorx) -> Tensor"), Contains("unknown type 'Tensorx'"));
  CHECK_THAT(error_of("f(Tensor x"), Contains("found the end of the schema"));
}

TEST_CASE("backward node names follow PyTorch's generated names") {
  CHECK(backward_node_name("fused_bias_gelu") == "FusedBiasGeluBackward0");
  CHECK(backward_node_name("scale_") == "ScaleBackward0");
  CHECK(backward_node_name("mm") == "MmBackward0");
}
