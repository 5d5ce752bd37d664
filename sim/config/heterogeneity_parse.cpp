#include "sim/config/heterogeneity_parse.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "sim/scenario/keys.hpp"
#include "sim/scenario/text.hpp"
#include "sim/scenario/units.hpp"

namespace dtsim::sim {
namespace {

// Pieces of `text` between separators, trimmed; empty pieces are dropped when `skip_empty` (a trailing ';'
// is harmless), otherwise they are an error.
std::vector<std::string> split(const std::string& text, char separator, bool skip_empty) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t at = text.find(separator, start);
    const std::string piece = trim(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (!piece.empty() || !skip_empty) out.push_back(piece);
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return out;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  for (const char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!current.empty()) out.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

std::string join(const std::vector<std::string>& tokens, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to && i < tokens.size(); ++i) out += (out.empty() ? "" : " ") + tokens[i];
  return out;
}

std::string quoted(const std::string& item) { return "'" + item + "'"; }

int parse_rank(const std::string& text, int workers, const std::string& item, const std::string& noun = "worker") {
  const std::string s = trim(text);
  int64_t v = 0;
  try {
    v = parse_int(s);
  } catch (const ValueError&) {
    throw ValueError("in " + quoted(item) + ": '" + s + "' is not a " + noun + " index",
                     noun == "worker" ? "write a rank, e.g. 3 (or worker 3)" : "write e.g. " + noun + " 3");
  }
  if (v < 0 || v >= workers)
    throw ValueError("in " + quoted(item) + ": " + noun + " " + s + " does not exist",
                     noun == "node" ? "nodes are numbered from 0, and cluster.workers = " + std::to_string(workers) +
                                          " GPUs fill at most " + std::to_string(workers) + " nodes"
                                    : "cluster.workers is " + std::to_string(workers) + ", so ranks run from 0 to " +
                                          std::to_string(workers - 1));
  return static_cast<int>(v);
}

// "worker 3", "worker3", "workers 8-11", "3", "8-11" → the ranks it names.
std::vector<int> parse_rank_item(const std::string& text, int workers, const std::string& item) {
  std::string s = trim(text);
  for (const char* word : {"workers", "worker"}) {
    if (lower(s).rfind(word, 0) == 0) {
      s = trim(s.substr(std::string(word).size()));
      break;
    }
  }
  const size_t dash = s.find('-', 1);  // not a leading minus sign
  if (dash == std::string::npos) return {parse_rank(s, workers, item)};
  const int lo = parse_rank(s.substr(0, dash), workers, item);
  const int hi = parse_rank(s.substr(dash + 1), workers, item);
  if (hi < lo) throw ValueError("in " + quoted(item) + ": range " + s + " runs backwards", "write low-high, e.g. 8-11");
  std::vector<int> out;
  for (int r = lo; r <= hi; ++r) out.push_back(r);
  return out;
}

// A comma-separated list of ranks and ranges, or 'all' (returned as an empty list).
std::vector<int> parse_rank_list(const std::string& text, int workers, const std::string& item) {
  if (lower(trim(text)) == "all") return {};
  std::vector<int> out;
  for (const std::string& piece : split(text, ',', false)) {
    if (piece.empty()) throw ValueError("in " + quoted(item) + ": empty worker in the list", "write e.g. 3, 8-11");
    const std::vector<int> ranks = parse_rank_item(piece, workers, item);
    out.insert(out.end(), ranks.begin(), ranks.end());
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    throw ValueError("in " + quoted(item) + ": a worker is listed twice", "");
  return out;
}

double parse_time(const std::string& text, const std::string& item) {
  double t = 0.0;
  try {
    t = parse_quantity(text, Dimension::Time);
  } catch (const ValueError& e) {
    throw ValueError("in " + quoted(item) + ": " + e.what(), e.hint());
  }
  if (t < 0) throw ValueError("in " + quoted(item) + ": time " + trim(text) + " is negative", "");
  return t;
}

// "50%" or "0.5": a fraction of nominal in (0, 1].
double parse_level(const std::string& text, const std::string& item) {
  std::string s = trim(text);
  const bool percent = !s.empty() && s.back() == '%';
  if (percent) s = trim(s.substr(0, s.size() - 1));
  double v = 0.0;
  try {
    v = parse_real(s);
  } catch (const ValueError&) {
    throw ValueError("in " + quoted(item) + ": '" + trim(text) + "' is not a bandwidth level", "write e.g. 50% or 0.5");
  }
  if (percent) v /= 100.0;
  if (v > 1.0)
    throw ValueError("in " + quoted(item) + ": level " + trim(text) + " is outside (0%, 100%]",
                     !percent && v <= 100.0 ? "a bare number is a fraction of the link: write " + trim(text) + "% for a percentage"
                                            : "a link cannot exceed its nominal bandwidth");
  // Below a ten-thousandth a link is as good as down, and its transfers' times run to astronomical figures.
  if (!(v >= 1e-4))
    throw ValueError("in " + quoted(item) + ": level " + trim(text) + " is below 0.01% of the link",
                     "use [faults] for a link that is down");
  return v;
}

// Splits `tokens` at the words of `keywords` (case-insensitive): result[""] holds what comes before the first
// keyword, result[k] what follows keyword k up to the next one. A keyword may appear once.
std::map<std::string, std::string> keyword_phrases(const std::vector<std::string>& tokens,
                                                   const std::vector<std::string>& keywords, const std::string& item) {
  std::map<std::string, std::string> out;
  std::string key;
  size_t start = 0;
  const auto close = [&](size_t end) { out[key] = join(tokens, start, end); };
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string word = lower(tokens[i]);
    if (std::find(keywords.begin(), keywords.end(), word) == keywords.end()) continue;
    close(i);
    if (out.count(word)) throw ValueError("in " + quoted(item) + ": '" + word + "' appears twice", "");
    key = word;
    start = i + 1;
  }
  close(tokens.size());
  return out;
}

// The text after a leading "at" ("at 10s" → "10s").
std::string after_at(const std::string& phrase, const std::string& keyword, const std::string& item) {
  const std::vector<std::string> tokens = words(phrase);
  if (tokens.empty() || lower(tokens[0]) != "at" || tokens.size() < 2)
    throw ValueError("in " + quoted(item) + ": expected '" + keyword + " at <time>'",
                     "write e.g. '" + keyword + " at 10s'");
  return join(tokens, 1, tokens.size());
}

// A fault's time after `keyword` ("down at", "up at", "for"): words after a complete time are a misspelt
// keyword ("down at 10s upp at 20s"), which would otherwise read as a unit ("unknown unit 's upp at 20s'").
double fault_time(const std::string& text, const std::string& keyword, const std::string& item) {
  const std::vector<std::string> tokens = words(text);
  if (tokens.size() >= 2 && is_quantity(tokens[0], Dimension::Time))  // not "10 s", a unit written apart
    throw ValueError("in " + quoted(item) + ": unexpected '" + join(tokens, 1, tokens.size()) + "' after '" + keyword +
                           " " + tokens[0] + "'",
                     "a failure reads 'worker 3 down at 10s', then 'up at 20s' or 'for 10s'");
  return parse_time(text, item);
}

}  // namespace

std::vector<SlowWorker> parse_slow_workers(const std::string& text, double default_factor, int workers) {
  std::vector<SlowWorker> out;
  if (trim(text).empty()) return out;
  for (const std::string& item : split(text, ',', false)) {
    if (item.empty()) throw ValueError("empty item in '" + trim(text) + "'", "write e.g. 3, 8-11, 5:0.25");
    const size_t colon = item.find(':');
    double factor = default_factor;
    if (colon != std::string::npos) {
      try {
        factor = parse_real(item.substr(colon + 1));
      } catch (const ValueError&) {
        throw ValueError("in " + quoted(item) + ": '" + trim(item.substr(colon + 1)) + "' is not a speed factor",
                         "write rank:factor, e.g. 5:0.25");
      }
      if (!(factor > 0.0 && factor <= 1.0))
        throw ValueError("in " + quoted(item) + ": speed factor must be in (0, 1]", "0.5 = half the sustained speed");
    }
    for (const int r : parse_rank_item(item.substr(0, colon), workers, item))
      out.push_back({r, factor, colon != std::string::npos});
  }
  std::sort(out.begin(), out.end(), [](const SlowWorker& a, const SlowWorker& b) { return a.worker < b.worker; });
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i].worker == out[i - 1].worker)
      throw ValueError("worker " + std::to_string(out[i].worker) + " is listed twice", "");
  return out;
}

std::vector<LinkProfile> parse_link_profiles(const std::string& text, int workers) {
  std::vector<LinkProfile> out;
  std::vector<bool> taken(static_cast<size_t>(workers), false);
  for (const std::string& item : split(text, ';', true)) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos)
      throw ValueError("in " + quoted(item) + ": expected '<workers>: <time> <level>, …'",
                       "write e.g. 'worker3: 0s 100%, 0.5s 50%, 1.5s 100%'");
    LinkProfile profile;
    profile.workers = parse_rank_list(item.substr(0, colon), workers, item);
    std::vector<std::string> points = split(item.substr(colon + 1), ',', false);
    // An optional "every <period>" ends the last point.
    std::vector<std::string> last = words(points.back());
    for (size_t i = 0; i < last.size(); ++i) {
      if (lower(last[i]) != "every") continue;
      profile.period = parse_time(join(last, i + 1, last.size()), item);
      if (!(profile.period > 0)) throw ValueError("in " + quoted(item) + ": the period must be positive", "");
      points.back() = join(last, 0, i);
      break;
    }
    for (const std::string& point : points) {
      std::vector<std::string> tokens = words(point);
      if (tokens.size() >= 2 && tokens.back() == "%") {  // "50 %"
        tokens[tokens.size() - 2] += "%";
        tokens.pop_back();
      }
      if (tokens.size() < 2)
        throw ValueError("in " + quoted(item) + ": point '" + point + "' is not '<time> <level>'",
                         "write e.g. 0.5s 50%");
      BandwidthPoint p;
      p.time = parse_time(join(tokens, 0, tokens.size() - 1), item);
      p.fraction = parse_level(tokens.back(), item);
      if (!profile.points.empty() && !(p.time > profile.points.back().time))
        throw ValueError("in " + quoted(item) + ": times must increase from point to point", "");
      profile.points.push_back(p);
    }
    if (profile.period > 0 && !(profile.period > profile.points.back().time))
      throw ValueError("in " + quoted(item) + ": the period must be longer than the last point's time",
                       "points are offsets within one period");
    const auto claim = [&](int r) {
      if (taken[static_cast<size_t>(r)])
        throw ValueError("worker " + std::to_string(r) + "'s link has two profiles", "give each link one profile");
      taken[static_cast<size_t>(r)] = true;
    };
    if (profile.workers.empty())
      for (int r = 0; r < workers; ++r) claim(r);
    for (const int r : profile.workers) claim(r);
    out.push_back(std::move(profile));
  }
  return out;
}

std::vector<BackgroundFlow> parse_background_flows(const std::string& text, int workers) {
  std::vector<BackgroundFlow> out;
  for (const std::string& item : split(text, ';', true)) {
    const size_t arrow = item.find("->");
    if (arrow == std::string::npos)
      throw ValueError("in " + quoted(item) + ": expected '<worker> -> <worker> …'",
                       "write e.g. 'worker0 -> worker3 from 1s to 2s at 5GB/s'");
    auto phrases = keyword_phrases(words(item.substr(arrow + 2)), {"from", "to", "for", "at"}, item);
    BackgroundFlow f;
    const std::vector<int> from = parse_rank_item(item.substr(0, arrow), workers, item);
    const std::vector<int> to = parse_rank_item(phrases[""], workers, item);
    if (from.size() != 1 || to.size() != 1)
      throw ValueError("in " + quoted(item) + ": a flow goes from one worker to one worker", "");
    f.from = from[0];
    f.to = to[0];
    if (f.from == f.to) throw ValueError("in " + quoted(item) + ": a flow needs two different workers", "");
    if (phrases.count("from")) f.start = parse_time(phrases["from"], item);
    if (phrases.count("to") && phrases.count("for"))
      throw ValueError("in " + quoted(item) + ": give 'to' or 'for', not both", "");
    if (phrases.count("to")) f.end = parse_time(phrases["to"], item);
    if (phrases.count("for")) f.end = f.start + parse_time(phrases["for"], item);
    if (!(f.end > f.start)) throw ValueError("in " + quoted(item) + ": the flow ends before it starts", "");
    if (phrases.count("at")) {
      try {
        f.rate = parse_quantity(phrases["at"], Dimension::Bandwidth);
      } catch (const ValueError& e) {
        throw ValueError("in " + quoted(item) + ": " + e.what(), e.hint());
      }
      if (!(f.rate >= 1.0))
        throw ValueError("in " + quoted(item) + ": the rate must be at least 1 B/s",
                         "leave 'at' out for a flow as fast as its fair share allows");
    }
    out.push_back(f);
  }
  return out;
}

std::vector<FaultEvent> parse_fault_events(const std::string& text, int workers) {
  std::vector<FaultEvent> out;
  for (const std::string& item : split(text, ';', true)) {
    auto phrases = keyword_phrases(words(item), {"down", "up", "for"}, item);
    // The target: "worker 3", "worker3", "node 1", "link 5"; words after it are a misspelt keyword.
    const std::vector<std::string> target_words = words(phrases[""]);
    const bool spaced = target_words.size() >= 2 && std::all_of(target_words[0].begin(), target_words[0].end(), [](char c) {
                          return std::isalpha(static_cast<unsigned char>(c));
                        });
    const size_t target_size = std::min(target_words.size(), spaced ? size_t{2} : size_t{1});
    if (target_words.size() > target_size)
      throw ValueError("in " + quoted(item) + ": unexpected '" + join(target_words, target_size, target_words.size()) +
                           "' after '" + join(target_words, 0, target_size) + "'",
                       "a failure reads 'worker 3 down at 10s', then 'up at 20s' or 'for 10s'");
    const std::string target = (target_words.empty() ? "" : target_words[0]) + (spaced ? target_words[1] : "");
    size_t digits = 0;
    while (digits < target.size() && std::isalpha(static_cast<unsigned char>(target[digits]))) ++digits;
    const std::string kind = lower(target.substr(0, digits));
    FaultEvent e;
    if (const auto target_kind = fault_target_table().parse(kind))
      e.target = *target_kind;
    else
      throw ValueError("in " + quoted(item) + ": '" + phrases[""] + "' is not a worker, node or link",
                       "write e.g. 'worker 3 down at 10s up at 20s', 'node 1 down at 5s', 'link 2 down at 1s for 2s'");
    e.index = parse_rank(target.substr(digits), workers, item, kind);
    if (!phrases.count("down"))
      throw ValueError("in " + quoted(item) + ": expected 'down at <time>'", "write e.g. 'worker 3 down at 10s'");
    e.down_at = fault_time(after_at(phrases["down"], "down", item), "down at", item);
    if (phrases.count("up") && phrases.count("for"))
      throw ValueError("in " + quoted(item) + ": give 'up at' or 'for', not both", "");
    if (phrases.count("up")) e.up_at = fault_time(after_at(phrases["up"], "up", item), "up at", item);
    if (phrases.count("for")) e.up_at = e.down_at + fault_time(phrases["for"], "for", item);
    if (!(e.up_at > e.down_at))
      throw phrases.count("for")
          ? ValueError("in " + quoted(item) + ": 'for " + phrases["for"] + "' is no time down", "give a duration above 0")
          : ValueError("in " + quoted(item) + (e.up_at == e.down_at ? ": it comes back up at the moment it goes down"
                                                                     : ": it comes back up before it goes down"),
                       "the 'up at' time must be later than the 'down at' time");
    out.push_back(e);
  }
  // Two failures of the same target must not overlap: "down" twice without an "up" in between is a mistake.
  for (size_t i = 0; i < out.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const FaultEvent& a = out[i];
      const FaultEvent& b = out[j];
      if (a.target == b.target && a.index == b.index && a.down_at < b.up_at && b.down_at < a.up_at)
        throw ValueError(
            std::string(to_string(a.target)) + " " + std::to_string(a.index) + " has two failures that overlap in time",
            "a target must come back up before it can go down again");
    }
  return out;
}

}  // namespace dtsim::sim
