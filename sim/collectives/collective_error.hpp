// What make_collective refuses. The collectives know nothing of scenario keys or flags: the error says which
// of make_collective's arguments is at fault, and the caller, which knows where the user set it (a scenario
// key, a command-line flag), turns it into an InputError.
#pragma once

#include <stdexcept>
#include <string>

namespace dtsim::sim {

class CollectiveError : public std::runtime_error {
 public:
  enum class Cause {
    Algorithm,       // the algorithm does not implement the kind, or cannot serve this group of ranks
    PipelineChunks,  // options.pipeline_chunk_bytes or options.max_pipeline_chunks below 1
    Root,            // options.root is not a rank
  };

  // what() is "<reason>; <hint>", or the reason alone without a hint.
  CollectiveError(Cause cause, std::string reason, std::string hint = "")
      : std::runtime_error(hint.empty() ? reason : reason + "; " + hint),
        cause_(cause),
        reason_(std::move(reason)),
        hint_(std::move(hint)) {}

  Cause cause() const { return cause_; }
  const std::string& reason() const { return reason_; }
  const std::string& hint() const { return hint_; }

 private:
  Cause cause_;
  std::string reason_;
  std::string hint_;
};

}  // namespace dtsim::sim
