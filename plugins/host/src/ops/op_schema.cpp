#include "rt/plugin_host/op_schema.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <set>

namespace rt::plugin {
namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class SchemaParser {
 public:
  explicit SchemaParser(std::string_view text) : text_(text) {}

  OpSchema parse() {
    OpSchema s;
    skip_space();
    s.name = name("the op's name");
    expect('(');
    skip_space();
    if (!accept(')')) {
      do {
        skip_space();
        s.arguments.push_back(argument(s));
        skip_space();
      } while (accept(','));
      expect(')');
    }
    skip_space();
    if (!accept_word("->")) fail("expected '->' and the results after the arguments");
    skip_space();
    if (accept('(')) {
      s.tuple_returns = true;
      skip_space();
      if (!accept(')')) {
        do {
          skip_space();
          s.returns.push_back(result(s, true));
          skip_space();
        } while (accept(','));
        expect(')');
      }
    } else {
      s.returns.push_back(result(s, false));
    }
    skip_space();
    if (pos_ < text_.size())
      fail(peek() == ',' ? std::string("write several results as (Tensor, Tensor)")
                         : fmt::format("unexpected '{}' after the results", text_.substr(pos_)));
    return s;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw OpSchemaError(fmt::format("op schema '{}': at column {}: {}", text_, pos_ + 1, what));
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool accept_word(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  void expect(char c) {
    skip_space();
    if (!accept(c))
      fail(pos_ < text_.size() ? fmt::format("expected '{}', found '{}'", c, peek())
                               : fmt::format("expected '{}', found the end of the schema", c));
  }
  std::string name(const char* what) {
    if (!is_name_start(peek()))
      fail(fmt::format("expected {} (letters, digits and '_', not starting with a digit)", what));
    const size_t start = pos_;
    while (is_name_char(peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  AliasInfo alias() {
    AliasInfo a;
    if (!accept('(')) return a;
    const char c = peek();
    if (c < 'a' || c > 'z') fail("expected an alias set, a lowercase letter, as in Tensor(a!) or Tensor(a)");
    ++pos_;
    a.set = c;
    a.write = accept('!');
    if (!accept(')')) fail("expected ')' closing the alias annotation, as in Tensor(a!)");
    return a;
  }

  ArgType type(AliasInfo& a) {
    const size_t start = pos_;
    const std::string word = is_name_start(peek()) ? name("a type") : std::string();
    if (word == "Tensor") {
      a = alias();
      if (accept('?')) {
        if (a.set) {
          pos_ = start;
          fail("an optional tensor cannot carry an alias annotation: write Tensor(a!) for one the op writes");
        }
        return ArgType::OptionalTensor;
      }
      return ArgType::Tensor;
    }
    if (word == "float") return ArgType::Float;
    if (word == "int") return ArgType::Int;
    if (word == "bool") return ArgType::Bool;
    pos_ = start;
    fail(fmt::format("unknown type '{}' (expected Tensor, Tensor?, float, int or bool)", word));
  }

  DefaultValue default_value(ArgType t, const std::string& arg) {
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != ')' &&
           !std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
    const std::string_view v = text_.substr(start, pos_ - start);
    auto bad = [&](const char* expected) { bad_default(start, v, arg, expected); };
    switch (t) {
      case ArgType::Tensor:
        pos_ = start;
        fail(fmt::format("Tensor argument '{}' cannot have a default; declare it Tensor? to make it optional", arg));
      case ArgType::OptionalTensor:
        if (v != "None") bad("None (the only default of a Tensor?)");
        return std::monostate{};
      case ArgType::Bool:
        if (v == "True") return true;
        if (v == "False") return false;
        bad("True or False");
        break;
      case ArgType::Int: {
        int64_t i = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), i);
        if (ec != std::errc() || p != v.data() + v.size()) bad("an integer");
        return i;
      }
      case ArgType::Float: {
        double d = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
        if (ec != std::errc() || p != v.data() + v.size()) bad("a number");
        return d;
      }
    }
    bad_default(start, v, arg, "valid");
  }
  [[noreturn]] void bad_default(size_t start, std::string_view v, const std::string& arg, const char* expected) {
    pos_ = start;
    fail(fmt::format("default '{}' of '{}' is not {}", v, arg, expected));
  }

  OpArgument argument(const OpSchema& s) {
    OpArgument a;
    a.type = type(a.alias);
    if (!std::isspace(static_cast<unsigned char>(peek()))) fail("expected a space and the argument's name after its type");
    skip_space();
    const size_t name_pos = pos_;
    a.name = name("an argument name");
    for (const OpArgument& other : s.arguments) {
      if (other.name == a.name) {
        pos_ = name_pos;
        fail(fmt::format("argument '{}' is declared twice", a.name));
      }
      if (a.alias.set && other.alias.set == a.alias.set) {
        pos_ = name_pos;
        fail(fmt::format("arguments '{}' and '{}' share alias set '{}'", other.name, a.name, a.alias.set));
      }
    }
    skip_space();
    if (accept('=')) {
      skip_space();
      a.default_value = default_value(a.type, a.name);
    } else if (!s.arguments.empty() && s.arguments.back().default_value) {
      pos_ = name_pos;
      fail(fmt::format("argument '{}' has no default but follows '{}', which has one", a.name,
                       s.arguments.back().name));
    }
    return a;
  }

  OpReturn result(const OpSchema& s, bool in_tuple) {
    OpReturn r;
    const size_t start = pos_;
    const std::string word = is_name_start(peek()) ? name("a result type") : std::string();
    if (word != "Tensor") {
      pos_ = start;
      fail(fmt::format("results must be Tensor (got '{}')", word));
    }
    r.alias = alias();
    if (r.alias.set) {
      bool found = false;
      for (const OpArgument& a : s.arguments) found = found || a.alias.set == r.alias.set;
      if (!found) {
        pos_ = start;
        fail(fmt::format("result alias set '{}' names no argument (annotate the argument it returns, as Tensor({}!))",
                         r.alias.set, r.alias.set));
      }
    }
    skip_space();
    if (in_tuple && is_name_start(peek())) name("a result name");  // "(Tensor values, Tensor indices)": documentation
    return r;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

void append_alias(std::string& out, const AliasInfo& a) {
  if (a.set) out += fmt::format("({}{})", a.set, a.write ? "!" : "");
}

}  // namespace

const char* arg_type_name(ArgType t) {
  switch (t) {
    case ArgType::Tensor: return "Tensor";
    case ArgType::OptionalTensor: return "Tensor?";
    case ArgType::Float: return "float";
    case ArgType::Int: return "int";
    case ArgType::Bool: return "bool";
  }
  return "?";
}

int OpSchema::aliased_argument(size_t result) const {
  const char set = returns.at(result).alias.set;
  if (!set) return -1;
  for (size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i].alias.set == set) return int(i);
  return -1;
}

std::vector<size_t> OpSchema::mutated_arguments() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i].alias.write) out.push_back(i);
  return out;
}

size_t OpSchema::num_tensor_arguments() const {
  size_t n = 0;
  for (const OpArgument& a : arguments) n += a.type == ArgType::Tensor || a.type == ArgType::OptionalTensor;
  return n;
}

std::string OpSchema::str() const {
  std::string out = name + "(";
  for (size_t i = 0; i < arguments.size(); ++i) {
    const OpArgument& a = arguments[i];
    if (i) out += ", ";
    out += a.type == ArgType::OptionalTensor ? "Tensor" : arg_type_name(a.type);
    append_alias(out, a.alias);
    if (a.type == ArgType::OptionalTensor) out += "?";
    out += " " + a.name;
    if (a.default_value) {
      out += "=";
      std::visit(
          [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, std::monostate>) out += "None";
            else if constexpr (std::is_same_v<V, bool>) out += v ? "True" : "False";
            else if constexpr (std::is_same_v<V, double>) {
              std::string d = fmt::format("{}", v);
              if (d.find_first_of(".eEn") == std::string::npos) d += ".0";
              out += d;
            }
            else out += std::to_string(v);
          },
          *a.default_value);
    }
  }
  out += ") -> ";
  if (tuple_returns) out += "(";
  for (size_t i = 0; i < returns.size(); ++i) {
    if (i) out += ", ";
    out += "Tensor";
    append_alias(out, returns[i].alias);
  }
  if (tuple_returns) out += ")";
  return out;
}

OpSchema parse_op_schema(std::string_view schema) { return SchemaParser(schema).parse(); }

}  // namespace rt::plugin
