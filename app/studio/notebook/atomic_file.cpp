#include "notebook/ipynb.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace rt::studio {
namespace {

std::string os_error(int err) { return std::strerror(err); }

// Writing into a symlink's target keeps the link (what editors do); the rename happens next to the target.
std::filesystem::path resolve_symlinks(const std::filesystem::path& path) {
  std::filesystem::path target = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!std::filesystem::is_symlink(target, ec)) return target;
    std::filesystem::path next = std::filesystem::read_symlink(target, ec);
    if (ec) return target;
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return target;
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  const std::filesystem::path target = resolve_symlinks(path);
  std::filesystem::path directory = target.parent_path();
  if (directory.empty()) directory = ".";
  const std::string shown = path.string();
  const std::string save_elsewhere = "Nothing was changed on disk; save to a folder you can write to (File > Save As).";

  struct stat existing {};
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  if (exists && S_ISDIR(existing.st_mode))
    throw NotebookFileError(path, fmt::format("{}: cannot save: a folder of that name exists. Choose another name.", shown));

  std::random_device random;
  int fd = -1;
  std::filesystem::path temporary;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temporary = directory / fmt::format(".{}.tmp-{:08x}", target.filename().string(), random());
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    const int err = errno;
    std::error_code ec;
    const std::string reason = !std::filesystem::is_directory(directory, ec)
                                   ? fmt::format("the folder {} does not exist", directory.string())
                                   : fmt::format("cannot create a file in {}: {}", directory.string(), os_error(err));
    throw NotebookFileError(path, fmt::format("{}: cannot save: {}. {}", shown, reason, save_elsewhere));
  }
  const auto fail = [&](const std::string& step, int err) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw NotebookFileError(path, fmt::format("{}: cannot save: {} failed: {}. {}", shown, step, os_error(err),
                                              save_elsewhere));
  };
  if (!write_all(fd, bytes)) fail("writing", errno);
  if (exists && ::fchmod(fd, existing.st_mode & 07777) != 0) fail("keeping the file mode", errno);
  if (::fsync(fd) != 0) fail("flushing to disk", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temporary.c_str());
    throw NotebookFileError(path, fmt::format("{}: cannot save: closing failed: {}. {}", shown, os_error(err),
                                              save_elsewhere));
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(temporary.c_str());
    throw NotebookFileError(path, fmt::format("{}: cannot save: replacing the file failed: {}. {}", shown,
                                              os_error(err), save_elsewhere));
  }
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);  // best effort: the rename is durable once the directory is flushed
    ::close(dir_fd);
  }
}

}  // namespace rt::studio
