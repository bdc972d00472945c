#include "store/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/errors.h"

namespace pg::store {
namespace fs = std::filesystem;

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Removes the temporary unless it was renamed into place.
struct TempFile {
  std::string path;
  int fd = -1;
  bool keep = false;
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    if (!keep && !path.empty()) ::unlink(path.c_str());
  }
};

}  // namespace

std::string resolve_output_target(const std::string& path, const std::string& what) {
  if (path.empty()) throw SettingError(what + ": the file name is empty");
  fs::path p(path);
  for (int depth = 0;; ++depth) {
    std::error_code ec;
    const auto st = fs::symlink_status(p, ec);
    if (ec || !fs::is_symlink(st)) break;
    if (depth == 40)
      throw SettingError(what + " '" + path + "': too many levels of symbolic links");
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) throw SettingError(what + " '" + path + "': cannot read link: " + ec.message());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  std::error_code ec;
  const auto st = fs::status(p, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    const std::string kind = fs::is_directory(st) ? "a directory" : "not a regular file";
    throw SettingError(what + " '" + path + "'" +
                       (p.string() == path ? "" : " (-> " + p.string() + ")") + " is " + kind +
                       "; perfgate only replaces regular files");
  }
  return p.string();
}

void write_file_atomically(const std::string& path, std::string_view text,
                           const std::string& what) {
  const std::string target = resolve_output_target(path, what);
  const fs::path dir = fs::path(target).has_parent_path() ? fs::path(target).parent_path() : ".";
  auto fail = [&](const std::string& doing, int err) {
    throw RuntimeFailure(what + " '" + path + "': " + doing + ": " + errno_text(err));
  };

  TempFile tmp;
  tmp.path = (dir / ("." + fs::path(target).filename().string() + ".XXXXXX")).string();
  tmp.fd = ::mkstemp(tmp.path.data());
  if (tmp.fd < 0) {
    const int err = errno;
    tmp.path.clear();
    if (err == ENOENT || err == ENOTDIR)
      throw SettingError(what + " '" + path + "': directory '" + dir.string() + "' does not exist");
    fail("cannot create a file in '" + dir.string() + "'", err);
  }
  // Keep the permissions of the file we replace; a new file gets the usual 0666 & ~umask.
  struct stat old {};
  mode_t mode;
  if (::stat(target.c_str(), &old) == 0) {
    mode = old.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(tmp.fd, mode) != 0) fail("cannot set permissions", errno);

  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(tmp.fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write failed", errno);  // ENOSPC, EFBIG (SIGXFSZ is ignored), EIO
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(tmp.fd) != 0) fail("write failed", errno);
  const int fd = tmp.fd;
  tmp.fd = -1;
  if (::close(fd) != 0) fail("write failed", errno);
  if (::rename(tmp.path.c_str(), target.c_str()) != 0) fail("cannot replace the file", errno);
  tmp.keep = true;
}

}  // namespace pg::store
