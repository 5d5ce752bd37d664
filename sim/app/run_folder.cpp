#include "sim/app/run_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/scenario/errors.hpp"

namespace fs = std::filesystem;

namespace dtsim::sim {
namespace {

constexpr const char* kLockName = ".dtsim-run.lock";

[[noreturn]] void fail_out(const std::string& reason, const std::string& hint = "choose another --out") {
  throw InputError("command line", "--out", reason, hint);
}

std::string now_text() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return text;
}

// The lock file's content: who holds the folder, for the message another run gives.
std::string describe_holder(int fd) {
  std::string content(512, '\0');
  const ssize_t n = pread(fd, content.data(), content.size(), 0);
  content.resize(n > 0 ? static_cast<size_t>(n) : 0);
  while (!content.empty() && (content.back() == '\n' || content.back() == '\0')) content.pop_back();
  // Its lines ("pid 123", "started ...", "scenario ...") as one phrase: "pid 123, started ..., scenario ...".
  std::string phrase;
  for (const char c : content) phrase += c == '\n' ? std::string(", ") : std::string(1, c);
  return phrase.empty() ? std::string("a run that has not yet said who it is") : phrase;
}

}  // namespace

const std::vector<std::string>& RunFolder::output_names() {
  static const std::vector<std::string> names = {"links.csv",  "metrics.csv",  "metrics.partial.csv",
                                                 "model.bin", "summary.json", "trace.json"};
  return names;
}

const std::vector<std::string>& RunFolder::derived_names() {
  static const std::vector<std::string> names = {"report.html", "run.png"};
  return names;
}

RunFolder::RunFolder(const std::string& out, const std::string& scenario) : out_(out) {
  std::error_code ec;
  if (fs::exists(out_, ec) && !fs::is_directory(out_, ec)) fail_out("'" + out_ + "' exists and is not a folder");
  // A sweep's folder holds run folders, not a run: a run written there would read as a sweep and a run at once.
  if (fs::exists(fs::path(out_) / "sweep.json", ec))
    fail_out("'" + out_ + "' is a sweep's folder (it holds sweep.json)", "choose another --out for this run");
  // The folders this run makes (--out and the parents it lacks: out/ for the default out/<run.name>), so that
  // abandon() can take them back.
  for (fs::path p = fs::absolute(out_, ec).lexically_normal(); !p.empty() && p != p.parent_path(); p = p.parent_path()) {
    if (fs::exists(p, ec) || ec) break;
    made_.push_back(p.string());
  }
  fs::create_directories(out_, ec);
  if (ec) fail_out("cannot create folder '" + out_ + "': " + ec.message());

  // flock: released by the kernel when this process ends, however it ends, so a crashed run never leaves a
  // stale lock behind.
  const std::string lock_path = (fs::path(out_) / kLockName).string();
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) fail_out("cannot write in folder '" + out_ + "': " + std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const std::string holder = describe_holder(lock_fd_);
    ::close(lock_fd_);
    lock_fd_ = -1;
    fail_out("'" + out_ + "' is in use by another dtsim run (" + holder + ")",
             "wait for that run to end, or choose another --out");
  }
  std::ostringstream who;
  who << "pid " << ::getpid() << "\nstarted " << now_text() << "\nscenario " << scenario << "\n";
  const std::string text = who.str();
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, text.data(), text.size(), 0) < 0)
    fail_out("cannot write in folder '" + out_ + "': " + std::strerror(errno));

  staging_ = (fs::path(out_) / ("partial-run-" + std::to_string(::getpid()))).string();
  fs::remove_all(staging_, ec);  // a crashed run of the same pid, long gone: we hold the lock
  fs::create_directories(staging_, ec);
  if (ec) fail_out("cannot create folder '" + staging_ + "': " + ec.message());
}

RunFolder::~RunFolder() {
  if (lock_fd_ >= 0) {
    ::flock(lock_fd_, LOCK_UN);
    ::close(lock_fd_);
  }
}

std::vector<std::string> RunFolder::abandon_paths(const std::string& first) const {
  std::vector<std::string> paths;
  if (!first.empty()) paths.push_back(first);
  paths.push_back(staging_);
  if (!made_.empty()) paths.push_back((fs::path(out_) / kLockName).string());
  paths.insert(paths.end(), made_.begin(), made_.end());  // deepest first; an rmdir only removes an empty one
  return paths;
}

void RunFolder::abandon() {
  std::error_code ec;
  fs::remove_all(staging_, ec);
  if (made_.empty()) return;
  fs::remove(fs::path(out_) / kLockName, ec);
  for (const std::string& folder : made_) fs::remove(folder, ec);  // only if empty: nothing else was written there
}

std::string RunFolder::staged(const std::string& name) const { return (fs::path(staging_) / name).string(); }

void RunFolder::publish() {
  if (published_) return;
  const fs::path out(out_);
  // First the old summary, so that no moment shows the previous run's claim next to new files.
  fs::remove(out / "summary.json");
  // What analysis/ wrote into the folder by default described the previous run (report.py's page).
  for (const std::string& name : derived_names()) fs::remove(out / name);
  for (const std::string& name : output_names())
    if (name != "summary.json" && !fs::exists(fs::path(staging_) / name)) fs::remove(out / name);
  for (const std::string& name : output_names()) {
    const fs::path from = fs::path(staging_) / name;
    if (name != "summary.json" && fs::exists(from)) fs::rename(from, out / name);
  }
  const fs::path summary = fs::path(staging_) / "summary.json";
  if (fs::exists(summary)) fs::rename(summary, out / "summary.json");
  fs::remove_all(staging_);
  published_ = true;
}

}  // namespace dtsim::sim
