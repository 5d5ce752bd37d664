#include "sim/app/sweep_results.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "models/input_file.hpp"
#include "models/json_errors.hpp"
#include "sim/app/outputs.hpp"
#include "sim/scenario/text.hpp"

namespace fs = std::filesystem;

namespace dtsim::sim {
namespace {

// Where each headline number lives in summary.json: the first pointer present wins (a timing-only run keeps
// its numbers under /simulation).
struct HeadlineSource {
  std::string column;
  std::vector<std::string> pointers;
};

const std::vector<HeadlineSource>& headline_sources() {
  static const std::vector<HeadlineSource> sources = {
      {"final_test_accuracy", {"/final_test_accuracy"}},
      {"best_test_accuracy", {"/best_test_accuracy"}},
      {"final_test_loss", {"/final_test_loss"}},
      {"target_reached", {"/target/reached"}},
      {"time_to_target_s", {"/target/simulated_time_s"}},
      {"cost_to_target", {"/target/cost_mid"}},
      {"simulated_time_s", {"/simulated_time_s"}},
      {"steps", {"/steps", "/simulation/steps"}},
      {"epochs", {"/epochs"}},
      {"step_s", {"/simulation/step_s"}},
      {"exposed_communication_s_per_step", {"/simulation/exposed_communication_s_per_step"}},
      {"scaling_efficiency", {"/simulation/scaling_efficiency"}},
      {"samples_per_second", {"/simulation/samples_per_second"}},
      {"tokens_per_second", {"/simulation/tokens_per_second"}},
      {"model_flops_utilisation", {"/simulation/model_flops_utilisation"}},
      {"compute_s", {"/time_breakdown_s/compute"}},
      {"communication_s", {"/time_breakdown_s/communication"}},
      {"idle_s", {"/time_breakdown_s/idle"}},
      {"bytes_sent", {"/bytes_sent", "/simulation/bytes_sent"}},
      {"mean_staleness", {"/mean_staleness"}},
      {"busiest_link_utilisation", {"/busiest_link/mean_utilisation"}},
      {"busiest_link_peak_utilisation", {"/busiest_link/peak_utilisation"}},
      {"compression_ratio", {"/compression/compression_ratio"}},
      {"gpu_hours", {"/cost/gpu_hours"}},
      {"cost_low", {"/cost/low"}},
      {"cost_mid", {"/cost/mid"}},
      {"cost_high", {"/cost/high"}},
      {"energy_kwh", {"/cost/energy_kwh"}},
      // Timing-only runs price a unit of work (a billion tokens or a million samples: summary.json's unit).
      {"seconds_per_unit", {"/simulation/seconds_per_unit"}},
      {"cost_per_unit_low", {"/simulation/cost_per_unit/0"}},
      {"cost_per_unit_high", {"/simulation/cost_per_unit/1"}},
      {"energy_kwh_per_unit", {"/simulation/energy_kwh_per_unit"}},
      {"wall_time_s", {"/wall_time_s"}},
  };
  return sources;
}

// Shortest text that reads back as the same double.
std::string number_text(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string();
}

// RFC 4180: a field holding a comma, quote or line end is quoted, its quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_field(fields[i]);
  return line + "\n";
}

// The headline columns that at least one row has, in headline order.
std::vector<std::string> present_columns(const std::vector<RunRow>& rows) {
  std::vector<std::string> out;
  for (const std::string& column : headline_columns())
    for (const RunRow& row : rows)
      if (row.numbers.count(column)) {
        out.push_back(column);
        break;
      }
  return out;
}

}  // namespace

const std::vector<std::string>& headline_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c;
    for (const HeadlineSource& s : headline_sources()) c.push_back(s.column);
    return c;
  }();
  return columns;
}

bool status_is_result(const std::string& status) {
  return status == "completed" || status == "diverged" || status == "failed";
}

bool run_is_done(const RunRow& row) { return status_is_result(row.status); }

RunRow read_run_row(const std::string& sweep_dir, const SweepRun& run) {
  RunRow row;
  row.run = &run;
  const fs::path path = fs::path(sweep_dir) / run.name / "summary.json";
  const auto unreadable = [&row](const std::string& because) {
    row.status = "unreadable";
    row.unreadable_because = because;
    return row;
  };
  // Read as every input file is: a FIFO left in its place would block the reader (models/input_file.hpp).
  models::InputFileProblem problem;
  const std::optional<std::string> text = models::read_input_file(path.string(), models::kMaxTextInputBytes, problem);
  if (problem.kind == models::InputFileProblem::Kind::Missing) {
    row.status = "missing";
    return row;
  }
  if (!text) return unreadable(problem.reason);
  nlohmann::json summary;
  try {
    summary = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    return unreadable("is not valid JSON (" + models::json_error_reason(e) + ")");
  }
  if (!summary.is_object() || !summary.contains("status") || !summary["status"].is_string())
    return unreadable("has no \"status\" string");
  row.status = summary["status"].get<std::string>();
  if (summary.contains("status_reason") && summary["status_reason"].is_string())
    row.status_reason = summary["status_reason"].get<std::string>();
  // A run made by hand into this folder is not the planned run: its --set keys must carry the run's values.
  if (summary.contains("sets") && summary["sets"].is_array()) {
    std::map<std::string, std::string> given;
    for (const nlohmann::json& set : summary["sets"])
      if (set.is_string()) given.insert(set_meaning(set.get<std::string>()));
    for (const auto& [key, value] : run.values) {
      if (key.find('.') == std::string::npos) continue;  // compare's run folders: the folder, not a scenario key
      const auto it = given.find(key);
      if (it == given.end() || it->second != value_meaning(key, value)) {
        row.status = "another run";  // not a result of this sweep: run again on resuming
        return row;
      }
    }
  }
  for (const HeadlineSource& source : headline_sources())
    for (const std::string& pointer : source.pointers) {
      const nlohmann::json::json_pointer p(pointer);
      if (!summary.contains(p)) continue;
      const nlohmann::json& v = summary.at(p);
      if (v.is_null()) continue;  // not measured (no target reached, no price)
      // Any other kind is a damaged summary: counting the run and showing '-' for it would say nothing.
      if (!v.is_boolean() && !v.is_number())
        return unreadable(pointer.substr(1) + " is " + elide_middle(v.dump(-1, ' ', true), 60) + ", not a number");
      row.numbers[source.column] = v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>();
      break;
    }
  if (summary.contains("numerics") && summary["numerics"].is_object()) {
    const nlohmann::json& numerics = summary["numerics"];
    if (numerics.contains("fingerprint") && numerics["fingerprint"].is_string())
      row.numerics_fingerprint = numerics["fingerprint"].get<std::string>();
    if (numerics.contains("isa_level") && numerics["isa_level"].is_string())
      row.numerics_build = numerics["isa_level"].get<std::string>();
    if (numerics.contains("backend") && numerics["backend"].is_string() && numerics["backend"].get<std::string>() != "cpu")
      row.numerics_build += ", " + numerics["backend"].get<std::string>();
  }
  for (const char* pointer : {"/cost/currency", "/simulation/currency"}) {
    const nlohmann::json::json_pointer p(pointer);
    if (summary.contains(p) && summary.at(p).is_string()) {
      row.currency = summary.at(p).get<std::string>();
      break;
    }
  }
  return row;
}

std::vector<RunRow> read_run_rows(const std::string& sweep_dir, const SweepPlan& plan) {
  std::vector<RunRow> rows;
  for (const SweepRun& run : plan.runs) rows.push_back(read_run_row(sweep_dir, run));
  return rows;
}

std::string results_csv(const SweepPlan& plan, const std::vector<RunRow>& rows) {
  const std::vector<std::string> columns = present_columns(rows);
  std::vector<std::string> header = {"run"};
  for (const VariedKey& v : plan.varied) header.push_back(v.key);
  header.push_back("status");
  header.insert(header.end(), columns.begin(), columns.end());
  header.push_back("status_reason");
  std::string out = csv_line(header);
  for (const RunRow& row : rows) {
    std::vector<std::string> fields = {row.run->name};
    for (const auto& kv : row.run->values) fields.push_back(kv.second);
    fields.push_back(row.status);
    for (const std::string& column : columns) {
      const auto it = row.numbers.find(column);
      fields.push_back(it == row.numbers.end() ? "" : number_text(it->second));
    }
    fields.push_back(row.status_reason);
    out += csv_line(fields);
  }
  return out;
}

std::vector<RunGroup> group_over_seeds(const SweepPlan& plan, const std::vector<RunRow>& rows) {
  const std::vector<std::string> keys = plan.group_keys();
  std::vector<RunGroup> groups;
  for (const RunRow& row : rows) {
    std::vector<std::string> values;
    for (const std::string& key : keys) values.push_back(*row.run->value_of(key));
    auto it = std::find_if(groups.begin(), groups.end(), [&](const RunGroup& g) { return g.values == values; });
    if (it == groups.end()) it = groups.insert(groups.end(), RunGroup{values, {}});
    it->runs.push_back(&row);
  }
  return groups;
}

ColumnStats column_stats(const std::vector<const RunRow*>& runs, const std::string& column) {
  // Results only: an interrupted run's numbers are those of a run cut short (it is run again on resuming).
  std::vector<double> values;
  for (const RunRow* row : runs)
    if (status_is_result(row->status))
      if (const auto it = row->numbers.find(column); it != row->numbers.end()) values.push_back(it->second);
  ColumnStats s;
  s.n = values.size();
  if (values.empty()) return s;
  // Shifted by the first value, so that equal values have exactly that mean and a spread of 0 (summing them
  // first left 1e-19 of rounding as a standard deviation).
  const double shift = values.front();
  double sum = 0.0;
  for (const double v : values) sum += v - shift;
  s.mean = shift + sum / static_cast<double>(s.n);
  double squares = 0.0;
  for (const double v : values) squares += (v - s.mean) * (v - s.mean);
  s.std = s.n > 1 ? std::sqrt(squares / static_cast<double>(s.n - 1)) : 0.0;
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  return s;
}

std::string summary_csv(const SweepPlan& plan, const std::vector<RunRow>& rows) {
  const std::vector<std::string> columns = present_columns(rows);
  std::vector<std::string> header = plan.group_keys();
  header.insert(header.end(), {"runs", "statuses"});
  for (const std::string& column : columns)
    for (const char* stat : {"_mean", "_std", "_min", "_max"}) header.push_back(column + stat);
  std::string out = csv_line(header);
  for (const RunGroup& group : group_over_seeds(plan, rows)) {
    std::vector<std::string> fields = group.values;
    fields.push_back(std::to_string(group.runs.size()));
    std::map<std::string, int> statuses;
    for (const RunRow* row : group.runs) ++statuses[row->status];
    std::string described;
    for (const auto& [status, count] : statuses) described += (described.empty() ? "" : " ") + status + ":" + std::to_string(count);
    fields.push_back(described);
    for (const std::string& column : columns) {
      const ColumnStats s = column_stats(group.runs, column);
      if (s.n == 0) {
        fields.insert(fields.end(), 4, "");
        continue;
      }
      fields.push_back(number_text(s.mean));
      fields.push_back(s.n < 2 ? "" : number_text(s.std));
      fields.push_back(number_text(s.min));
      fields.push_back(number_text(s.max));
    }
    out += csv_line(fields);
  }
  return out;
}

void write_sweep_tables(const std::string& sweep_dir, const SweepPlan& plan, const std::vector<RunRow>& rows) {
  const std::string results = results_csv(plan, rows);
  // The figure and page that analysis/ writes into the sweep's folder by default describe the old tables.
  std::ifstream old_file(fs::path(sweep_dir) / "results.csv", std::ios::binary);
  const std::string old_results((std::istreambuf_iterator<char>(old_file)), std::istreambuf_iterator<char>());
  if (old_results != results)
    for (const char* derived : {"sweep.png", "report.html"}) fs::remove(fs::path(sweep_dir) / derived);
  write_file_atomically(sweep_dir, "results.csv", results);
  write_file_atomically(sweep_dir, "summary.csv", summary_csv(plan, rows));
}

std::vector<RunRow> collect_sweep_tables(const std::string& sweep_dir, const SweepPlan& plan) {
  const std::string lock_path = (fs::path(sweep_dir) / ".dtsim-tables.lock").string();
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) ::flock(fd, LOCK_EX);  // released when closed (or when the process ends)
  std::vector<RunRow> rows;
  try {
    rows = read_run_rows(sweep_dir, plan);
    write_sweep_tables(sweep_dir, plan, rows);
  } catch (...) {
    if (fd >= 0) ::close(fd);
    throw;
  }
  if (fd >= 0) ::close(fd);
  return rows;
}

}  // namespace dtsim::sim
