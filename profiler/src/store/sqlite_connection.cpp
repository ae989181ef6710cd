#include "store/sqlite_connection.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include "rt/prof/store.h"

namespace rt::prof::sqlite {

Connection::Connection(const std::filesystem::path& path, bool create, int busy_timeout_ms)
    : path_(path), busy_timeout_ms_(busy_timeout_ms) {
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(fmt::format(
        "cannot open store {} (SQLite said: {}): check that the directory exists and is writable",
        path.string(), msg));
  }
  sqlite3_extended_result_codes(db_, 0);
  sqlite3_busy_timeout(db_, busy_timeout_ms);
}

Connection::~Connection() { sqlite3_close_v2(db_); }

void Connection::fail(int rc, std::string_view doing) const {
  const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  const std::string p = path_.string();
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      throw StoreError(fmt::format("{} is not a RustyTorch store (SQLite said: {})", p, msg));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      throw StoreError(fmt::format(
          "{} is locked by another connection (gave up after {} ms while {}; SQLite said: {}): "
          "close the program holding it, or retry",
          p, busy_timeout_ms_, doing, msg));
    case SQLITE_CORRUPT:
      throw StoreError(fmt::format("{} is corrupt (SQLite said: {} while {}): restore it from a copy "
                                   "or start a new store", p, msg, doing));
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_IOERR:
    case SQLITE_FULL:
      throw StoreError(fmt::format("cannot write store {} while {} (SQLite said: {}): check that the "
                                   "file and its directory are writable and the disk has space",
                                   p, doing, msg));
    default:
      throw StoreError(fmt::format("store {}: {} failed (SQLite said: {})", p, doing, msg));
  }
}

void Connection::check(int rc, std::string_view doing) const {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) fail(rc, doing);
}

void Connection::exec(std::string_view sql) {
  const std::string s(sql);
  check(sqlite3_exec(db_, s.c_str(), nullptr, nullptr, nullptr), fmt::format("running '{}'", s.substr(0, 60)));
}

int64_t Connection::query_int(std::string_view sql) {
  Statement st(*this, sql);
  return st.step() ? st.int64(0) : 0;
}

int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

Statement::Statement(Connection& db, std::string_view sql) : db_(&db) {
  const int rc = sqlite3_prepare_v3(db.handle(), sql.data(), int(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                    &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, fmt::format("preparing '{}'", sql.substr(0, 60)));
}

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(stmt_);
    db_ = o.db_;
    stmt_ = o.stmt_;
    o.stmt_ = nullptr;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::bind(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
void Statement::bind(int index, double value) { sqlite3_bind_double(stmt_, index, value); }
void Statement::bind(int index, std::string_view text) {
  sqlite3_bind_text(stmt_, index, text.data(), int(text.size()), SQLITE_STATIC);
}
void Statement::bind_null(int index) { sqlite3_bind_null(stmt_, index); }
void Statement::bind_string_id(int index, int64_t session_base, uint32_t local_id) {
  if (local_id == 0) sqlite3_bind_null(stmt_, index);
  else sqlite3_bind_int64(stmt_, index, session_base | int64_t(local_id));
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(stmt_);
  db_->fail(rc, fmt::format("running '{}'", std::string_view(sqlite3_sql(stmt_)).substr(0, 60)));
}

void Statement::run() {
  step();
  sqlite3_reset(stmt_);
}

void Statement::reset() { sqlite3_reset(stmt_); }

int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }
std::string Statement::text(int column) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return p ? std::string(p, size_t(sqlite3_column_bytes(stmt_, column))) : std::string();
}
bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

Transaction::Transaction(Connection& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (open_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

}  // namespace rt::prof::sqlite
