// RecoveryStore: autosave files, listing after a crash (kill -9 of the writer), restore, discard.
#include "notebook/ipynb.h"
#include "notebook/recovery_store.h"
#include "notebook_test_support.h"

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace rt::studio;
using rt::studio::test::ScratchDir;

namespace {

NotebookDocument edited_document(const std::filesystem::path& path) {
  Notebook nb = Notebook::new_empty();
  nb.cells.push_back(Cell::new_code(nb, "saved = 1"));
  write_ipynb(path, nb);
  NotebookDocument doc = NotebookDocument::open(path);
  doc.set_source(0, "unsaved edit");
  doc.insert_cell(1, CellType::markdown, "# also unsaved");
  return doc;
}

}  // namespace

TEST_CASE("keys are file-name safe and stable per path", "[studio][recovery]") {
  const std::string key = RecoveryStore::key_for_path("/home/u/my notebook (1).ipynb");
  CHECK(key.starts_with("my_notebook__1_-"));
  CHECK(key == RecoveryStore::key_for_path("/home/u/./my notebook (1).ipynb"));
  CHECK(key != RecoveryStore::key_for_path("/home/v/my notebook (1).ipynb"));
  CHECK(RecoveryStore::key_for_untitled(2) == "untitled-" + std::to_string(::getpid()) + "-2");
  RecoveryStore store("/nonexistent");
  CHECK_THROWS_AS(store.discard("../escape"), std::invalid_argument);
}

TEST_CASE("default directory honours RT_STUDIO_RECOVERY_DIR", "[studio][recovery]") {
  ::setenv("RT_STUDIO_RECOVERY_DIR", "/tmp/rt-recovery-env-test", 1);
  CHECK(RecoveryStore::default_directory() == "/tmp/rt-recovery-env-test");
  ::unsetenv("RT_STUDIO_RECOVERY_DIR");
  ::setenv("XDG_DATA_HOME", "/tmp/xdg", 1);
  CHECK(RecoveryStore::default_directory() == "/tmp/xdg/rustytorch/recovery");
  ::unsetenv("XDG_DATA_HOME");
  CHECK(RecoveryStore::default_directory().string().ends_with(".local/share/rustytorch/recovery"));
}

TEST_CASE("save, list, restore and discard", "[studio][recovery]") {
  const ScratchDir dir;
  RecoveryStore store(dir / "recovery");
  CHECK(store.list().empty());  // no folder yet: nothing to recover

  NotebookDocument doc = edited_document(dir / "work.ipynb");
  const std::string key = RecoveryStore::key_for(doc);
  store.save(key, doc);
  CHECK((std::filesystem::status(dir / "recovery").permissions() & std::filesystem::perms::all) ==
        std::filesystem::perms(0700));

  auto entries = store.list();
  REQUIRE(entries.size() == 1);
  const RecoveryEntry& e = entries[0];
  CHECK(e.key == key);
  CHECK(e.error.empty());
  CHECK(e.original_path == dir / "work.ipynb");
  CHECK(e.display_name == "work.ipynb");
  CHECK(e.cell_count == 2);
  CHECK(!e.original_changed);
  CHECK(!e.owner_running);  // written by this process
  CHECK(std::chrono::system_clock::now() - e.saved_at < std::chrono::minutes(1));

  NotebookDocument restored = store.restore(e);
  CHECK(restored.is_dirty());
  CHECK(restored.path() == dir / "work.ipynb");
  CHECK(restored.cell(0).source == "unsaved edit");
  CHECK(restored.cell(1).source == "# also unsaved");
  CHECK(restored.cell(0).id == doc.cell(0).id);
  CHECK(!restored.changed_on_disk());

  // Saving again replaces the entry (one file per key); the original changing elsewhere is noticed.
  doc.set_source(0, "newer edit");
  store.save(key, doc);
  rt::studio::test::write_bytes(dir / "work.ipynb", to_ipynb(Notebook::new_empty()));
  entries = store.list();
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].original_changed);
  CHECK(store.load(entries[0]).cells[0].source == "newer edit");
  CHECK(store.restore(entries[0]).changed_on_disk());

  store.discard(key);
  CHECK(store.list().empty());
  CHECK_NOTHROW(store.discard(key));  // already gone
}

TEST_CASE("untitled notebooks are recoverable too", "[studio][recovery]") {
  const ScratchDir dir;
  RecoveryStore store(dir.path());
  NotebookDocument doc;
  doc.set_source(0, "scratch work");
  store.save(RecoveryStore::key_for(doc, 3), doc);
  const auto entries = store.list();
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].display_name == "Untitled");
  CHECK(entries[0].original_path.empty());
  CHECK(!entries[0].original_changed);
  NotebookDocument restored = store.restore(entries[0]);
  CHECK(restored.is_untitled());
  CHECK(restored.is_dirty());
  CHECK(restored.cell(0).source == "scratch work");
}

TEST_CASE("corrupt recovery files are listed with the reason, after good ones", "[studio][recovery]") {
  const ScratchDir dir;
  RecoveryStore store(dir.path());
  NotebookDocument doc;
  store.save("good", doc);
  rt::studio::test::write_bytes(dir / "half.rtrecovery.json", "{\"format\": \"rustytorch-studio-rec");
  rt::studio::test::write_bytes(dir / "alien.rtrecovery.json", "{\"format\": \"other\"}");
  rt::studio::test::write_bytes(dir / "unrelated.txt", "not ours");
  const auto entries = store.list();
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].key == "good");
  CHECK(entries[0].error.empty());
  CHECK(!entries[1].error.empty());
  CHECK(!entries[2].error.empty());
  CHECK(entries[1].error.find(".rtrecovery.json") != std::string::npos);
  CHECK_THROWS_AS(store.restore(entries[1]), NotebookFormatError);
  store.discard(entries[1].key);
  store.discard(entries[2].key);
  CHECK(store.list().size() == 1);
}

TEST_CASE("an autosave from a studio killed with SIGKILL is offered back, a live one is not", "[studio][recovery]") {
  const ScratchDir dir;
  const auto original = dir / "train.ipynb";
  { edited_document(original); }  // writes the original file
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The "studio": opens the notebook, edits it, autosaves, then hangs until killed.
    ::close(ready[0]);
    try {
      NotebookDocument doc = NotebookDocument::open(original);
      doc.set_source(0, "edit made before the crash");
      RecoveryStore(dir / "recovery").save(RecoveryStore::key_for(doc), doc);
    } catch (...) {
      ::_exit(3);
    }
    const char byte = 1;
    (void)!::write(ready[1], &byte, 1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  ::close(ready[0]);

  RecoveryStore store(dir / "recovery");
  auto entries = store.list();
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].owner_pid == child);
  CHECK(entries[0].owner_running);  // that studio still has it open

  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WIFSIGNALED(status));

  entries = store.list();
  REQUIRE(entries.size() == 1);
  CHECK(!entries[0].owner_running);
  CHECK(!entries[0].original_changed);
  NotebookDocument recovered = store.restore(entries[0]);
  CHECK(recovered.cell(0).source == "edit made before the crash");
  CHECK(recovered.path() == original);
  recovered.save();
  store.discard(entries[0].key);
  CHECK(read_ipynb(original).cells[0].source == "edit made before the crash");
  CHECK(store.list().empty());
}

TEST_CASE("autosave to an unwritable place says so", "[studio][recovery]") {
  const ScratchDir dir;
  rt::studio::test::write_bytes(dir / "file", "x");
  RecoveryStore store(dir / "file" / "recovery");
  NotebookDocument doc;
  CHECK_THROWS_WITH(store.save("k", doc), Catch::Contains("autosave of Untitled failed") &&
                                              Catch::Contains("RT_STUDIO_RECOVERY_DIR"));
}
