// Compares the ledger summaries every rank publishes and words what is wrong: a desync (the same
// sequence number in a group, different collectives) or a suspected hang (members waiting in a collective
// that another member has not called). Pure functions of the summaries, so tests feed them directly.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rt/dist/ledger.h"
#include "rt/export.h"

namespace rt::dist::detail {

// This process's summary: rank, and per group the last sequence number issued and the most recent
// collectives (op, tensor, fingerprint, call site, finished, how long it has been waiting).
RT_API nlohmann::json ledger_summary(int rank, size_t recent = 8);

struct LedgerReport {
  std::string key;               // identifies the finding, so it is reported once ("desync/default/683")
  std::string text;              // what rank 0 prints
  std::vector<int> waited_for;   // a hang: the ranks that have not called the collective
};

// Every finding in `summaries` (one per rank that published; missing ranks are skipped). A collective
// counts as hung once members have waited `hang_seconds` in it.
RT_API std::vector<LedgerReport> check_ledger_summaries(const std::vector<nlohmann::json>& summaries, double hang_seconds);

}  // namespace rt::dist::detail
