// CuptiCollector for builds without CUPTI: every start() explains what is missing.
#include "rt/prof/cupti_collector.h"

namespace rt::prof {

struct CuptiCollector::State {};

bool cupti_built() { return false; }

CuptiCollector::CuptiCollector() = default;
CuptiCollector::~CuptiCollector() = default;

void CuptiCollector::start() {
  throw CuptiUnavailableError(
      "CUPTI support was not built: install the CUDA toolkit (with CUPTI, /usr/local/cuda) and reconfigure with "
      "-DRT_CUPTI=ON (or AUTO) to record GPU activity");
}

void CuptiCollector::stop(SessionData&) {
  throw rt::Error("CuptiCollector::stop: the collector is not running (CUPTI support was not built)");
}

bool CuptiCollector::running() const { return false; }
void CuptiCollector::push_correlation(uint64_t) noexcept {}
void CuptiCollector::pop_correlation() noexcept {}

}  // namespace rt::prof
