#include "launch_status.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "launch_process.h"

namespace rt::cli {

namespace fs = std::filesystem;

fs::path make_job_dir(const std::string& job_id) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = (fs::path(tmp && *tmp ? tmp : "/tmp") / ("rtorch-launch-" + job_id + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error(fmt::format("cannot create the job directory {}: {}", pattern, std::strerror(errno)));
  return pattern;
}

void write_rank_status(const fs::path& dir, const RankStatus& s) {
  const nlohmann::json j = {{"rank", s.rank},           {"local_rank", s.local_rank},
                            {"pid", s.pid},             {"signaled", s.signaled},
                            {"code", s.code},           {"terminated_by", s.terminated_by},
                            {"started_at", s.started_at}, {"ended_at", s.ended_at},
                            {"restart_count", s.restart_count}, {"last_lines", s.last_lines}};
  const fs::path final_path = dir / fmt::format("rank-{}.json", s.rank);
  const fs::path tmp_path = dir / fmt::format(".rank-{}.json.{}", s.rank, getpid());
  {
    std::ofstream out(tmp_path);
    out << j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", tmp_path.string()));
  }
  fs::rename(tmp_path, final_path);
}

std::vector<RankStatus> read_rank_statuses(const fs::path& dir) {
  std::vector<RankStatus> all;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("rank-") || !name.ends_with(".json")) continue;
    try {
      std::ifstream in(entry.path());
      const nlohmann::json j = nlohmann::json::parse(in);
      RankStatus s;
      s.rank = j.at("rank");
      s.local_rank = j.at("local_rank");
      s.pid = j.at("pid");
      s.signaled = j.at("signaled");
      s.code = j.at("code");
      s.terminated_by = j.at("terminated_by");
      s.started_at = j.at("started_at");
      s.ended_at = j.at("ended_at");
      s.restart_count = j.at("restart_count");
      s.last_lines = j.at("last_lines").get<std::vector<std::string>>();
      all.push_back(std::move(s));
    } catch (const std::exception&) {
      continue;
    }
  }
  std::sort(all.begin(), all.end(), [](const RankStatus& a, const RankStatus& b) { return a.rank < b.rank; });
  return all;
}

void clear_rank_statuses(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().filename().string().starts_with("rank-")) fs::remove(entry.path(), ec);
}

const RankStatus* first_failure(const std::vector<RankStatus>& statuses) {
  const RankStatus* best = nullptr;
  auto better = [](const RankStatus& a, const RankStatus* b) {
    if (!b) return true;
    const bool a_own = a.terminated_by == 0, b_own = b->terminated_by == 0;
    if (a_own != b_own) return a_own;
    return a.ended_at < b->ended_at;
  };
  for (const RankStatus& s : statuses)
    if (s.failed() && better(s, best)) best = &s;
  return best;
}

std::string describe_exit(const RankStatus& s) {
  if (s.signaled) return fmt::format("signal {} ({})", signal_name(s.code), s.code);
  return fmt::format("exit code {}", s.code);
}

double seconds_since_epoch() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace rt::cli
