// rt/error.h — the exceptions the engine throws at its API boundary.
//
//   try { rt::matmul(a, b); }
//   catch (const rt::ShapeError& e) { std::puts(e.what()); }
//   // matmul: shapes [64, 784] and [128, 10] cannot be multiplied: dimension 1 of the first
//   // operand (784) != dimension 0 of the second (128) (in module 'net.fc1').
//   // Hint: did you mean the transpose of the second operand?
//
// Every message names the op; shape errors also name every operand's shape, the dimension
// that mismatches, the current module scope (see rt/op_observer.h) and a hint when one helps.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "rt/export.h"
#include "rt/shape.h"

RT_API_BEGIN

namespace rt {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class ShapeError : public Error { using Error::Error; };       // mismatched or invalid shapes
class DTypeError : public Error { using Error::Error; };       // unsupported or mismatched dtypes
class DeviceError : public Error { using Error::Error; };      // device mismatch, device unusable
class OutOfMemoryError : public Error { using Error::Error; }; // a device allocator ran out of memory
class IndexError : public Error { using Error::Error; };       // index or dimension out of range
class ValueError : public Error { using Error::Error; };       // bad argument value, corrupt input
class ZeroDivisionError : public Error { using Error::Error; }; // integer x / 0, x % 0
class NotImplementedError : public Error { using Error::Error; };
class AutogradError : public Error { using Error::Error; };    // graph misuse, in-place after save
class InterruptedError : public Error { using Error::Error; }; // cancelled via rt::request_cancel()

std::string format_shape(const Shape& shape);  // "[2, 3]"

// " (in module 'net.fc1')" or "" when no module is running.
std::string module_context();

// Builds "<op>: <what> (in module 'm'). Hint: <hint>" and throws ShapeError.
[[noreturn]] void throw_shape_error(const std::string& op, const std::string& what,
                                    const std::string& hint = {});

// Wraps a possibly negative dim into [0, ndim); throws IndexError naming op and tensor rank.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace rt

RT_API_END
