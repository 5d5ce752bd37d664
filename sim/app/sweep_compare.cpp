#include "sim/app/sweep_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "sim/scenario/errors.hpp"
#include "sim/scenario/keys.hpp"

namespace dtsim::sim {
namespace {

// What compare shows first, when the runs have it: accuracy, then time, then money and energy, then traffic.
const std::vector<std::string>& preferred_columns() {
  static const std::vector<std::string> columns = {
      "final_test_accuracy", "time_to_target_s", "cost_to_target", "simulated_time_s", "communication_s", "idle_s",
      "step_s", "exposed_communication_s_per_step", "scaling_efficiency", "tokens_per_second", "samples_per_second",
      "cost_mid", "cost_per_unit_low", "energy_kwh", "energy_kwh_per_unit", "bytes_sent", "busiest_link_utilisation",
      "mean_staleness", "compression_ratio"};
  return columns;
}

// Headers a reader understands without the docs; a cost column carries its range.
std::string header_of(const std::string& column) {
  static const std::map<std::string, std::string> names = {
      {"final_test_accuracy", "final accuracy"}, {"best_test_accuracy", "best accuracy"},
      {"time_to_target_s", "time to target (s)"}, {"cost_to_target", "cost to target"},
      {"simulated_time_s", "simulated time (s)"}, {"communication_s", "communication (s)"}, {"idle_s", "idle (s)"},
      {"compute_s", "compute (s)"}, {"step_s", "step (s)"}, {"exposed_communication_s_per_step", "exposed comm. per step (s)"},
      {"scaling_efficiency", "scaling efficiency"}, {"tokens_per_second", "tokens/s"}, {"samples_per_second", "samples/s"},
      {"cost_mid", "cost [low-high]"}, {"cost_per_unit_low", "cost per unit [low-high]"}, {"energy_kwh", "energy (kWh)"},
      {"energy_kwh_per_unit", "energy per unit (kWh)"}, {"bytes_sent", "bytes sent"}, {"mean_staleness", "mean staleness"},
      {"busiest_link_utilisation", "busiest link (mean util.)"},
      {"busiest_link_peak_utilisation", "busiest link (peak util.)"},
      {"compression_ratio", "compression ratio"}};
  const auto it = names.find(column);
  return it == names.end() ? column : it->second;
}

std::string g4(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

bool is_cost_column(const std::string& column) {
  return column == "cost_mid" || column == "cost_per_unit_low" || column == "cost_to_target";
}

// The one currency of the rows' costs, or "" when they have none or several.
std::string common_currency(const std::vector<const RunRow*>& rows) {
  std::string currency;
  for (const RunRow* r : rows) {
    if (r->currency.empty()) continue;
    if (!currency.empty() && r->currency != currency) return "";
    currency = r->currency;
  }
  return currency;
}

// `in_header`: the table's one currency, already named in the column's header.
std::string cell(const std::vector<const RunRow*>& members, const std::string& column, bool in_header) {
  const ColumnStats s = column_stats(members, column);
  if (s.n == 0) return "-";
  // Prices in different currencies cannot be averaged, nor shown side by side without their unit.
  std::string unit;
  if (is_cost_column(column) && !in_header) {
    unit = common_currency(members);
    if (unit.empty()) return "mixed currencies";
    unit = " " + unit;
  }
  std::string text = g4(s.mean);
  if (s.n > 1) text += " ± " + g4(s.std);
  // A price is a range (the regions' lowest and highest rates): shown beside the mid price.
  const auto range = [&](const std::string& low, const std::string& high) {
    const ColumnStats l = column_stats(members, low), h = column_stats(members, high);
    return l.n && h.n ? " [" + g4(l.mean) + "-" + g4(h.mean) + "]" : std::string();
  };
  if (column == "cost_mid") text += unit + range("cost_low", "cost_high");
  else if (column == "cost_per_unit_low") {
    const ColumnStats h = column_stats(members, "cost_per_unit_high");
    text = g4(s.mean) + (h.n ? "-" + g4(h.mean) : "") + unit;
  } else {
    text += unit;
  }
  return text;
}

// Display width: UTF-8 continuation bytes take no column.
size_t width_of(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

std::vector<std::string> default_compare_columns(const std::vector<RunRow>& rows) {
  std::vector<std::string> out;
  for (const std::string& column : preferred_columns())
    if (std::any_of(rows.begin(), rows.end(), [&](const RunRow& r) { return r.numbers.count(column) > 0; }))
      out.push_back(column);
  return out;
}

std::string comparison_table(const SweepPlan& plan, const std::vector<RunRow>& rows,
                             const std::vector<std::string>& columns) {
  for (const std::string& column : columns) {
    const auto& known = headline_columns();
    if (std::find(known.begin(), known.end(), column) == known.end()) {
      const std::string near = suggest_among(column, known);
      throw InputError("command line", "--columns", "'" + column + "' is not a number column of a run's results",
                       near.empty() ? "see docs/sweeps.md for the columns" : "did you mean '" + near + "'?");
    }
  }
  if (columns.empty())
    throw InputError("command line", "--columns", "names no column", "e.g. --columns final_test_accuracy,cost_mid");
  for (size_t i = 0; i < columns.size(); ++i)
    if (std::find(columns.begin(), columns.begin() + static_cast<std::ptrdiff_t>(i), columns[i]) !=
        columns.begin() + static_cast<std::ptrdiff_t>(i))
      throw InputError("command line", "--columns", "names '" + columns[i] + "' twice", "name each column once");
  const std::vector<std::string> keys = plan.group_keys();
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> header = keys;
  header.push_back("runs");
  // One currency for every priced run: named once, in the cost columns' headers; several: in every cell.
  std::vector<const RunRow*> all;
  for (const RunRow& r : rows) all.push_back(&r);
  const std::string currency = common_currency(all);
  for (const std::string& column : columns) {
    std::string h = header_of(column);
    if (is_cost_column(column) && !currency.empty()) {
      const size_t bracket = h.find(" [");
      h = bracket == std::string::npos ? h + " (" + currency + ")" : h.substr(0, bracket) + " (" + currency + ")" + h.substr(bracket);
    }
    header.push_back(h);
  }
  table.push_back(header);

  for (const RunGroup& group : group_over_seeds(plan, rows)) {
    std::vector<std::string> line = group.values;
    size_t with_result = 0;
    for (const RunRow* row : group.runs) with_result += run_is_done(*row) ? 1 : 0;
    std::string runs = with_result == group.runs.size()
                           ? std::to_string(with_result)
                           : std::to_string(with_result) + " of " + std::to_string(group.runs.size());
    // A mean over runs that diverged, failed or never finished says so: their numbers are not a finished run's.
    std::map<std::string, int> other;
    for (const RunRow* row : group.runs)
      if (row->status != "completed") ++other[row->status];
    std::string note;
    for (const auto& [status, count] : other) note += (note.empty() ? "" : ", ") + std::to_string(count) + " " + status;
    line.push_back(note.empty() ? runs : runs + " (" + note + ")");
    for (const std::string& column : columns) line.push_back(cell(group.runs, column, !currency.empty()));
    table.push_back(line);
  }
  std::vector<size_t> widths(header.size(), 0);
  for (const auto& line : table)
    for (size_t c = 0; c < line.size(); ++c) widths[c] = std::max(widths[c], width_of(line[c]));
  std::string out;
  for (const auto& line : table) {
    std::string text;
    for (size_t c = 0; c < line.size(); ++c) {
      text += line[c];
      if (c + 1 < line.size()) text += std::string(widths[c] - width_of(line[c]) + 2, ' ');
    }
    out += text + "\n";
  }
  return out;
}

std::string numerics_mismatch_warning(const std::vector<RunRow>& rows) {
  std::map<std::string, std::pair<std::string, int>> fingerprints;  // fingerprint -> (build, runs)
  int trained_without = 0;
  for (const RunRow& r : rows) {
    if (!status_is_result(r.status)) continue;
    if (!r.numerics_fingerprint.empty()) {
      auto& entry = fingerprints[r.numerics_fingerprint];
      entry.first = r.numerics_build;
      ++entry.second;
    } else if (r.numbers.count("final_test_accuracy")) {
      ++trained_without;  // trained, by a dtsim that did not record its numerics
    }
  }
  if (fingerprints.size() + (trained_without > 0 ? 1 : 0) < 2) return "";
  std::string groups;
  for (const auto& [id, entry] : fingerprints)
    groups += (groups.empty() ? "" : "; ") + std::to_string(entry.second) + " with fingerprint " + id + " (" +
              (entry.first.empty() ? "unknown build" : entry.first) + ")";
  if (trained_without > 0)
    groups += (groups.empty() ? "" : "; ") + std::to_string(trained_without) + " with none recorded (a dtsim older "
              "than its numerics fingerprint, built with -march=native)";
  return "these runs were computed with different numerics (" + groups + "): their accuracies and losses can "
         "differ by rounding alone, not only by what the runs vary; rerun them with one build to compare them "
         "(summary.json's numerics, docs/compute.md)";
}

}  // namespace dtsim::sim
