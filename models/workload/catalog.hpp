// The workload catalog: JSON architecture descriptions in models/workloads/ (one file per workload), turned
// into a Workload by the generators of transformer.hpp and resnet.hpp. The files carry their sources.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "models/workload/workload.hpp"

namespace dtsim::models {

// A catalog file that cannot be read or describes no valid workload. what() is one line:
// "<file>:<line>: <key>: <reason>; <hint>" (line and hint when known).
class WorkloadFileError : public std::runtime_error {
 public:
  WorkloadFileError(const std::string& file, int line, const std::string& key, const std::string& reason,
                    const std::string& hint = "");
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// Parses one catalog file's text (`file` names it in errors). Throws WorkloadFileError.
Workload parse_workload(const std::string& text, const std::string& file);
// Reads and parses a file. Throws WorkloadFileError.
Workload load_workload(const std::string& path);

// The catalog's .json files in `dir`, sorted by name; a WorkloadFileError if the folder cannot be read.
std::vector<std::string> catalog_files(const std::string& dir);
// Their names (the files' stems).
std::vector<std::string> catalog_names(const std::string& dir);
// Where a workload named by catalog name or by .json path lives (it may not exist).
std::string workload_file(const std::string& name_or_path, const std::string& dir);
// Whether `name_or_path` is a catalog name (not a path) that no file in `dir` answers to: the one case in which a
// reader lists the catalog instead of reading (or refusing) a file.
bool is_catalog_miss(const std::string& name_or_path, const std::string& dir);
// A workload by catalog name (the file `<dir>/<name>.json`) or by path to a .json file. Throws WorkloadFileError
// naming the known workloads when there is no such file.
Workload find_workload(const std::string& name_or_path, const std::string& dir);

}  // namespace dtsim::models
