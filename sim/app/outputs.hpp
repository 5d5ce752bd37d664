// What a run leaves behind: summary.json, the optional model.bin, and the summary printed for a person.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "gpu/numerics_environment.hpp"
#include "sim/app/run.hpp"

namespace dtsim::sim {

const char* dtsim_version();

// summary.json's busiest_link: the link with the highest mean utilisation (links.csv has them all).
nlohmann::json link_json(const LinkTraffic::LinkRow& link);
nlohmann::json make_summary(const RunInputs& inputs, const RunResult& result, double wall_time_s);

// What decides the rounding of a run's numerics (gpu/numerics_environment.hpp): its fingerprint, summary.json's
// "numerics" object, and the one line the console shows.
gpu::NumericsFingerprint numerics_fingerprint_of(const RunResult& r);
nlohmann::json numerics_json(const gpu::NumericsFingerprint& f);
std::string describe_numerics(const gpu::NumericsFingerprint& f);

// Writes `content` to dir/name through a temporary file and a rename, so a reader never sees half a file.
void write_file_atomically(const std::string& dir, const std::string& name, const std::string& content);

// crc32 of a file's bytes ("crc32:xxxxxxxx"), or "unreadable": what validate --resume and a sweep's manifest
// compare to tell whether a scenario file changed.
std::string file_crc32(const std::string& path);

// A JSON file dtsim wrote (a run's summary.json, validate-run.json), read as every input file is (a FIFO or a
// device in its place is not read: input_file.hpp); nullopt when it is missing, not a regular file or not JSON.
std::optional<nlohmann::json> read_json_file(const std::string& path);

// The final parameters as little-endian float32, in the network's flat order.
void write_model(const std::string& dir, const std::vector<float>& params);

// One line describing the run's setup, printed before it starts.
std::string describe_setup(const RunInputs& inputs);
// The short summary printed when a run ends.
std::string human_summary(const RunInputs& inputs, const RunResult& result, double wall_time_s,
                          const std::string& out_dir);
// One progress line per evaluation point.
// `step_word` names what p.step counts (StrategyDescriptor::row_step: step, update or round).
std::string progress_line(const EvalPoint& p, const char* step_word = "step");

}  // namespace dtsim::sim
