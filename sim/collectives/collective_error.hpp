// What make_collective refuses. The collectives know nothing of scenario keys or flags: the error says which
// of make_collective's arguments is at fault, and the caller, which knows where the user set it (a scenario
// key, a command-line flag), turns it into an InputError.
#pragma once

#include <stdexcept>
#include <string>

#include "sim/config/collective_types.hpp"

namespace dtsim::sim {

class CollectiveError : public std::runtime_error {
 public:
  using Cause = CollectiveRefusal;

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
