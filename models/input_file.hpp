// Opening a file that a user named as input (a scenario, a profile, a workload, a dataset, a partition file, a
// base model): the one place that decides whether a path may be read. A FIFO would block open() and read() until
// some other process wrote to it, and a device such as /dev/zero or /dev/urandom never ends; both are refused
// before anything is read. The file is opened with O_NONBLOCK and checked on the open descriptor (fstat), so a
// FIFO swapped in after a check cannot block either, and what is read is capped.
//
// Header-only: the scenario layer of sim/ reads its files through it without linking the models library.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace dtsim::models {

// The most a text input (a scenario, a profile, a workload file) may hold: such a file is a few KiB, and 16 MiB
// is far past any real one.
constexpr std::uintmax_t kMaxTextInputBytes = std::uintmax_t(16) << 20;

// Why a path cannot be read. `reason` follows the file's name or a noun naming it ("scenario file not found",
// "ff.json: is not a regular file (a FIFO, a device or a socket)").
struct InputFileProblem {
  enum class Kind { None, Missing, LinkLoop, Folder, NotRegular, TooLarge, Unreadable };
  Kind kind = Kind::None;
  std::string reason;
  explicit operator bool() const { return kind != Kind::None; }
};

namespace input_file_detail {

inline InputFileProblem from_errno(int err) {
  using Kind = InputFileProblem::Kind;
  if (err == ENOENT || err == ENOTDIR) return {Kind::Missing, "not found"};
  if (err == ELOOP) return {Kind::LinkLoop, "is a loop of symbolic links (a link that leads back to itself)"};
  if (err == ENXIO) return {Kind::NotRegular, "is not a regular file (a FIFO, a device or a socket)"};
  return {Kind::Unreadable, std::string("cannot be read (") + std::strerror(err) + ")"};
}

inline InputFileProblem from_mode(mode_t mode) {
  using Kind = InputFileProblem::Kind;
  if (S_ISREG(mode)) return {};
  if (S_ISDIR(mode)) return {Kind::Folder, "is a folder, not a file"};
  return {Kind::NotRegular, "is not a regular file (a FIFO, a device or a socket)"};
}

}  // namespace input_file_detail

// An open descriptor of `path` if it is a regular file (links followed), else -1 with `problem` set. The caller
// closes the descriptor. The path is looked at before it is opened (opening a device can act on it), and the
// open descriptor again.
inline int open_input_file(const std::string& path, InputFileProblem& problem) {
  using namespace input_file_detail;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    problem = from_errno(errno);
    return -1;
  }
  if ((problem = from_mode(st.st_mode))) return -1;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    problem = from_errno(errno);
    return -1;
  }
  if (::fstat(fd, &st) != 0 || (problem = from_mode(st.st_mode))) {
    if (!problem) problem = from_errno(errno);
    ::close(fd);
    return -1;
  }
  // Back to blocking reads: a regular file never blocks, and the flag must not reach a reader such as zlib.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// Why `path` could not be read as an input file; no problem (false) when it can be.
inline InputFileProblem input_file_problem(const std::string& path) {
  InputFileProblem problem;
  const int fd = open_input_file(path, problem);
  if (fd >= 0) ::close(fd);
  return problem;
}

// The whole content of the regular file `path`, at most `max_bytes`, or nullopt with `problem` set. A file over
// the limit is refused by its size before it is read, and one that grows past it while read (a file of /proc
// reports size 0) when it does.
inline std::optional<std::string> read_input_file(const std::string& path, std::uintmax_t max_bytes,
                                                  InputFileProblem& problem) {
  using Kind = InputFileProblem::Kind;
  const int fd = open_input_file(path, problem);
  if (fd < 0) return std::nullopt;
  const auto too_large = [&](std::uintmax_t size) {
    const std::string limit = max_bytes % (1 << 20) == 0 ? std::to_string(max_bytes >> 20) + " MiB"
                                                          : std::to_string(max_bytes) + " bytes";
    problem = {Kind::TooLarge, (size > max_bytes ? "is " + std::to_string(size) + " bytes, more" : std::string("is more")) +
                                   " than the " + limit + " such a file may hold"};
  };
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    ::close(fd);
    too_large(static_cast<std::uintmax_t>(st.st_size));
    return std::nullopt;
  }
  std::string content;
  char chunk[1 << 16];
  while (true) {
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int err = errno;
      ::close(fd);
      problem = {err == EISDIR ? Kind::Folder : Kind::Unreadable, std::string("cannot be read (") + std::strerror(err) + ")"};
      return std::nullopt;
    }
    if (got == 0) break;
    if (content.size() + static_cast<std::uintmax_t>(got) > max_bytes) {
      ::close(fd);
      too_large(0);
      return std::nullopt;
    }
    content.append(chunk, static_cast<size_t>(got));
  }
  ::close(fd);
  return content;
}

}  // namespace dtsim::models
