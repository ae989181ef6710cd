// Thin RAII over sqlite3 / sqlite3_stmt for the store. Every failure throws StoreError naming
// the store file, what was being done and SQLite's message.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "rt/export.h"

struct sqlite3;
struct sqlite3_stmt;

namespace rt::prof::sqlite {

class Connection;

// Exported from rt_profiler (rt/export.h): the store tests open their own connections to check the
// stored rows.
class RT_API Statement {
 public:
  Statement() = default;
  Statement(Connection& db, std::string_view sql);
  Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Statement& operator=(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  void bind(int index, int64_t value);
  void bind(int index, double value);
  void bind(int index, std::string_view text);  // SQLITE_STATIC: text must outlive step()
  void bind_null(int index);
  void bind_string_id(int index, int64_t session_base, uint32_t local_id);  // NULL for 0

  bool step();       // true while a row is available
  void run();        // step() that expects no rows, then reset()
  void reset();

  int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  bool is_null(int column) const;

 private:
  Connection* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

class RT_API Connection {
 public:
  // Opens (creating when `create`) the file; never throws for a non-database file — the first
  // statement does, through check().
  Connection(const std::filesystem::path& path, bool create, int busy_timeout_ms);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  void exec(std::string_view sql);
  int64_t query_int(std::string_view sql);
  int64_t last_insert_rowid() const;

  // Throws StoreError for SQLite result `rc` while `doing` something.
  [[noreturn]] void fail(int rc, std::string_view doing) const;
  void check(int rc, std::string_view doing) const;

  sqlite3* handle() const { return db_; }
  const std::filesystem::path& path() const { return path_; }
  int busy_timeout_ms() const { return busy_timeout_ms_; }

 private:
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
  int busy_timeout_ms_ = 0;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back when destroyed uncommitted.
class RT_API Transaction {
 public:
  explicit Transaction(Connection& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  Connection& db_;
  bool open_ = true;
};

}  // namespace rt::prof::sqlite
