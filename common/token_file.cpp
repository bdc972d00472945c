#include "common/token_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/errors.h"

namespace pg {

namespace {

std::string octal_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

}  // namespace

std::string read_token_file(const std::string& path, const std::string& setting) {
  const std::string where = setting + " " + path;
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the fstat below refuses it anyway.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw SettingError(where + ": cannot open: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw SettingError(where + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw SettingError(where + ": not a regular file (a token file must be a plain file)");
  if ((st.st_mode & 077) != 0)
    throw SettingError(where + ": permissions " + octal_mode(st.st_mode) +
                       " are too open: group or others may read the token; run `chmod 600 " + path +
                       "`");
  if (static_cast<size_t>(st.st_size) > kMaxTokenFileBytes)
    throw SettingError(where + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                       std::to_string(kMaxTokenFileBytes) + " a token file may hold");
  // Read at most one byte past the cap, whatever the size claimed: the file may be growing.
  std::string text(kMaxTokenFileBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw SettingError(where + ": cannot read: " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kMaxTokenFileBytes)
    throw SettingError(where + ": more than the " + std::to_string(kMaxTokenFileBytes) +
                       " bytes a token file may hold");
  text.resize(got);
  constexpr const char* kSpace = " \t\r\n";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string::npos) throw SettingError(where + ": the file is empty");
  std::string token = text.substr(first, text.find_last_not_of(kSpace) - first + 1);
  if (token.find_first_of(kSpace) != std::string::npos)
    throw SettingError(where + ": holds more than one word; expected a single token");
  for (unsigned char c : token)
    if (c < 0x21 || c > 0x7e)
      throw SettingError(where + ": holds a control or non-ASCII byte; a token is printable ASCII");
  return token;
}

}  // namespace pg
