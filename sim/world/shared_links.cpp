#include "sim/world/shared_links.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dtsim::sim {

namespace sg4 = simgrid::s4u;

bool SharedLinks::Job::served(double now) const {
  // A few steps of the clock's own resolution: a shorter sleep would not move the clock at all.
  const double tick = 4 * (std::nextafter(now, std::numeric_limits<double>::infinity()) - now);
  return remaining <= std::max(done, tick);
}

size_t SharedLinks::Channel::sharing(double now) const {
  return static_cast<size_t>(std::count_if(jobs.begin(), jobs.end(), [now](const auto& j) { return !j->served(now); }));
}

void SharedLinks::Channel::advance() {
  const double now = sg4::Engine::get_clock();
  const size_t k = sharing(last_event);
  if (k > 0) {
    const double share = (now - last_event) / static_cast<double>(k);
    for (const auto& job : jobs)
      if (!job->served(last_event)) job->remaining -= share;
  }
  last_event = now;
}

void SharedLinks::serve(const std::vector<sg4::Host*>& ranks, double seconds) {
  if (!(seconds > 0)) return;
  Channel& channel = channels_[ranks];
  channel.advance();
  const auto job = std::make_shared<Job>();
  job->remaining = seconds;
  job->done = 1e-12 * seconds;
  channel.jobs.push_back(job);
  // Leaves the channel however the call ends, a killed actor's (a failure) included: only memory is touched.
  struct Leave {
    Channel& channel;
    const Job* job;
    ~Leave() {
      channel.jobs.remove_if([this](const std::shared_ptr<Job>& j) { return j.get() == job; });
    }
  } leave{channel, job.get()};
  for (double now = sg4::Engine::get_clock(); !job->served(now); now = sg4::Engine::get_clock()) {
    // The next call to finish under the present sharing, this one or another.
    const double k = static_cast<double>(channel.sharing(now));
    double next = std::numeric_limits<double>::infinity();
    for (const auto& j : channel.jobs)
      if (!j->served(now)) next = std::min(next, j->remaining * k);
    sg4::this_actor::sleep_for(next);
    channel.advance();
  }
}

}  // namespace dtsim::sim
