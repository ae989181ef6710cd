#include "rt/parallel.h"

#include "cpu/loops.h"

namespace rt {

void set_num_threads(int n) { cpu::set_num_threads(n); }
int get_num_threads() { return cpu::num_threads(); }

}  // namespace rt
