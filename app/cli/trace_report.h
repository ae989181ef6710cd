// app/cli/trace_report.h — the text `rtorch trace summary` and `rtorch trace list` print.
//
//   std::string text = format_summary(data, {.sort_by = "self_cpu_time_total", .row_limit = 20});
//   std::string rows = format_session_list(store.list_sessions());
//
// Contracts: format_summary prints PyTorch's key_averages table (rt::prof::format_table; an unknown
// sort key throws rt::ValueError listing the valid ones), then one line per step when the session
// has steps, one per (process group, collective) when it has collectives (rt::prof::collective_stats), then
// the memory peak by category when it has memory events.
#pragma once
#include <string>
#include <vector>

#include "rt/prof/events.h"
#include "rt/prof/store.h"

namespace rt::cli {

struct SummaryOptions {
  std::string sort_by = "cpu_time_total";
  int row_limit = 100;  // < 0: every row
  bool group_by_shape = false;
};

std::string format_summary(const rt::prof::SessionData& data, const SummaryOptions& options);
std::string format_session_list(const std::vector<rt::prof::SessionInfo>& sessions);
std::string format_bytes(int64_t bytes);  // "512 B", "1.50 KiB", "3.25 MiB", "2.00 GiB"

}  // namespace rt::cli
