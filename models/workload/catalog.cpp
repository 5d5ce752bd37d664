#include "models/workload/catalog.hpp"

#include <algorithm>
#include <cstdio>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "models/input_file.hpp"
#include "models/json_errors.hpp"
#include "models/name_table.hpp"
#include "models/workload/resnet.hpp"
#include "models/workload/transformer.hpp"

namespace dtsim::models {
namespace {

using Json = nlohmann::json;

enum class Family { Transformer, ResNet };
const NameTable<Family>& families() {
  static const NameTable<Family> table{{Family::Transformer, "transformer"}, {Family::ResNet, "resnet"}};
  return table;
}
const NameTable<FeedForward>& feed_forwards() {
  static const NameTable<FeedForward> table{{FeedForward::Gelu, "gelu"}, {FeedForward::SwiGlu, "swiglu"}};
  return table;
}
const NameTable<NormKind>& norms() {
  static const NameTable<NormKind> table{{NormKind::LayerNorm, "layernorm"}, {NormKind::RmsNorm, "rmsnorm"}};
  return table;
}

// A text from the file, quoted for a message: JSON-escaped and ASCII only, so that control characters or
// look-alike letters cannot reach a terminal.
std::string json_quoted(const std::string& text) { return Json(text).dump(-1, ' ', true); }

// A field name from the file as it appears in a message's path: as written when plain, quoted otherwise.
std::string field_name(const std::string& key) {
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-';
  });
  return plain ? key : json_quoted(key);
}

std::string render(const std::string& file, int line, const std::string& key, const std::string& reason,
                   const std::string& hint) {
  std::string text = file;
  if (line > 0) text += ":" + std::to_string(line);
  if (!key.empty()) text += ": " + key;
  text += ": " + reason;
  if (!hint.empty()) text += "; " + hint;
  return text;
}

// Reads one JSON object's fields, checking each against the fields it may have, so that a misspelt field is
// an error (it would otherwise be ignored) and every error names the file, the line of the field and its path.
class Reader {
 public:
  Reader(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  [[noreturn]] void fail(const std::string& path, const std::string& reason, const std::string& hint = "") const {
    const std::string leaf = path.substr(path.find_last_of('.') + 1);
    throw WorkloadFileError(file_, line_of(leaf.substr(0, leaf.find('['))), path, reason, hint);
  }

  // A field given twice in one object, reported at its second appearance.
  [[noreturn]] void fail_at_repeat(const std::string& path) const {
    const std::string leaf = path.substr(path.find_last_of('.') + 1);
    throw WorkloadFileError(file_, line_of(leaf.substr(0, leaf.find('[')), 2), path,
                            "is given twice (JSON readers keep one of the two without a word)", "keep one of the two");
  }

  // Every key of `object` must be among `allowed`.
  void only(const Json& object, const std::string& path, const std::vector<std::string>& allowed) const {
    if (!object.is_object()) fail(path, "must be an object { ... }");
    for (const auto& [key, value] : object.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      fail(join(path, field_name(key)), "is not a field here", "fields: " + join_names(allowed, ", ", ", "));
    }
  }

  const Json& need(const Json& object, const std::string& path, const std::string& key) const {
    if (!object.contains(key)) fail(join(path, key), "is missing");
    return object.at(key);
  }

  // A whole number from `least` to `most` (limits that keep every product of shapes far from overflow and the
  // layer table small enough to build; `least` is what the generator accepts, so that the range said is the
  // range meant).
  int whole(const Json& object, const std::string& path, const std::string& key, std::optional<int> fallback,
            int least, int most) const {
    if (!object.contains(key)) {
      if (!fallback) fail(join(path, key), "is missing", "give a whole number");
      return *fallback;
    }
    const Json& v = object.at(key);
    if (!v.is_number_integer()) fail(join(path, key), "must be a whole number, not " + short_dump(v));
    // (nlohmann reads a number without a sign as unsigned: 0 is one, and is below a least of 1 too.)
    const bool below = v.is_number_unsigned() ? v.get<unsigned long long>() < static_cast<unsigned long long>(least)
                                              : v.get<long long>() < least;
    if (below || (v.is_number_unsigned() ? v.get<unsigned long long>() > static_cast<unsigned long long>(most)
                                         : v.get<long long>() > most))
      fail(join(path, key), "must be between " + std::to_string(least) + " and " + std::to_string(most) + ", not " + v.dump());
    return static_cast<int>(v.get<long long>());
  }

  bool flag(const Json& object, const std::string& path, const std::string& key, bool fallback) const {
    if (!object.contains(key)) return fallback;
    const Json& v = object.at(key);
    if (!v.is_boolean()) fail(join(path, key), "must be true or false, not " + short_dump(v));
    return v.get<bool>();
  }

  // A string of at most kMaxText bytes, one line of printable text: `dtsim workload` prints it to a terminal.
  std::string text(const Json& object, const std::string& path, const std::string& key, bool required) const {
    if (!object.contains(key)) {
      if (required) fail(join(path, key), "is missing");
      return "";
    }
    const Json& v = object.at(key);
    if (!v.is_string()) fail(join(path, key), "must be a string, not " + short_dump(v));
    return checked_text(v.get<std::string>(), join(path, key));
  }

  std::string checked_text(const std::string& text, const std::string& path) const {
    if (text.size() > kMaxText)
      fail(path, "is " + std::to_string(text.size()) + " bytes long, more than the " + std::to_string(kMaxText) +
                     " a line of text may be", "shorten it");
    for (const unsigned char c : text)
      if (c < 0x20 || c == 0x7f)
        fail(path, "holds a control character (" + json_quoted(std::string(1, static_cast<char>(c))) + ")",
             "write it as one line of plain text");
    return text;
  }

  // A value for a message: at most 80 characters of its JSON.
  static std::string short_dump(const Json& v) {
    const std::string all = v.dump(-1, ' ', true);
    return all.size() <= 80 ? all : all.substr(0, 60) + "... (" + std::to_string(all.size()) + " characters)";
  }

  static constexpr std::size_t kMaxText = 1000;

  template <class Enum>
  Enum choice(const Json& object, const std::string& path, const std::string& key, const NameTable<Enum>& table,
              std::optional<Enum> fallback) const {
    const std::string name = text(object, path, key, !fallback);
    if (name.empty() && fallback) return *fallback;
    const auto value = table.parse(name);
    if (!value) fail(join(path, key), json_quoted(name) + " is not known", "use " + table.or_list());
    return *value;
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

 private:
  // The line of the nth "key" in the file (1-based), or 0.
  int line_of(const std::string& key, int nth = 1) const {
    auto at = text_.find("\"" + key + "\"");
    while (at != std::string::npos && --nth > 0) at = text_.find("\"" + key + "\"", at + 1);
    if (at == std::string::npos) return 0;
    return 1 + static_cast<int>(std::count(text_.begin(), text_.begin() + static_cast<long>(at), '\n'));
  }

  const std::string& text_;
  const std::string& file_;
};

// The generator's own checks (shapes that cannot be built), reported at the field's line in the file.
template <class Spec>
void checked_by_generator(const Reader& r, const std::string& section, const Spec& spec) {
  try {
    validate(spec);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();  // "<field> <reason>", from require_field
    const auto space = what.find(' ');
    r.fail(section + "." + what.substr(0, space), what.substr(space + 1));
  }
}

// Bounds on shapes: far beyond any real model, small enough that a layer table is quick to build and no
// count overflows (10^4 layers of 10^6-wide matrices stay below 2^64 parameters).
constexpr int kMaxLayers = 10'000;
constexpr int kMaxWidth = 1'000'000;
constexpr int kMaxVocab = 100'000'000;
constexpr int kMaxSequence = 10'000'000;
constexpr int kMaxImage = 100'000;

TransformerSpec read_transformer(const Reader& r, const Json& t) {
  const std::string p = "transformer";
  r.only(t, p, {"layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "sequence", "max_positions", "token_types",
                "feed_forward", "norm", "bias", "embedding_norm", "final_norm", "lm_head", "span_head",
                "tied_embeddings", "head_transform", "head_bias", "pooler", "pooler_classes", "dropout",
                "flash_attention", "causal", "lora"});
  TransformerSpec s;
  s.layers = r.whole(t, p, "layers", std::nullopt, 1, kMaxLayers);
  s.hidden = r.whole(t, p, "hidden", std::nullopt, 1, kMaxWidth);
  s.heads = r.whole(t, p, "heads", std::nullopt, 1, kMaxWidth);
  s.kv_heads = r.whole(t, p, "kv_heads", 0, 0, kMaxWidth);
  s.ffn = r.whole(t, p, "ffn", std::nullopt, 1, kMaxWidth);
  s.vocab = r.whole(t, p, "vocab", std::nullopt, 1, kMaxVocab);
  s.sequence = r.whole(t, p, "sequence", std::nullopt, 1, kMaxSequence);
  s.max_positions = r.whole(t, p, "max_positions", 0, 0, kMaxSequence);
  s.token_types = r.whole(t, p, "token_types", 0, 0, kMaxWidth);
  s.feed_forward = r.choice(t, p, "feed_forward", feed_forwards(), std::optional<FeedForward>{});
  s.norm = r.choice(t, p, "norm", norms(), std::optional<NormKind>{});
  s.bias = r.flag(t, p, "bias", false);
  s.embedding_norm = r.flag(t, p, "embedding_norm", false);
  s.final_norm = r.flag(t, p, "final_norm", false);
  s.lm_head = r.flag(t, p, "lm_head", false);
  s.span_head = r.flag(t, p, "span_head", false);
  s.tied_embeddings = r.flag(t, p, "tied_embeddings", false);
  s.head_transform = r.flag(t, p, "head_transform", false);
  s.head_bias = r.flag(t, p, "head_bias", false);
  s.pooler = r.flag(t, p, "pooler", false);
  s.pooler_classes = r.whole(t, p, "pooler_classes", 0, 0, kMaxVocab);
  s.dropout = r.flag(t, p, "dropout", false);
  s.flash_attention = r.flag(t, p, "flash_attention", false);
  s.causal = r.flag(t, p, "causal", false);
  if (t.contains("lora")) {
    const Json& l = t.at("lora");
    const std::string lp = p + ".lora";
    r.only(l, lp, {"rank", "alpha", "targets"});
    s.lora.rank = r.whole(l, lp, "rank", std::nullopt, 0, kMaxWidth);
    // Rank 0 adds no adapter: the file would declare LoRA and train every weight.
    if (s.lora.rank < 1) r.fail(lp + ".rank", "must be at least 1", "leave \"lora\" out to train every weight");
    const Json& alpha = r.need(l, lp, "alpha");
    if (!alpha.is_number() || alpha.get<double>() <= 0) r.fail(lp + ".alpha", "must be a positive number");
    s.lora.alpha = alpha.get<double>();
    const Json& targets = r.need(l, lp, "targets");
    if (!targets.is_array()) r.fail(lp + ".targets", "must be a list of projection names, e.g. [\"q\", \"v\"]");
    for (const auto& target : targets) {
      if (!target.is_string()) r.fail(lp + ".targets", "must hold names, not " + Reader::short_dump(target));
      if (std::find(s.lora.targets.begin(), s.lora.targets.end(), target.get<std::string>()) != s.lora.targets.end())
        r.fail(lp + ".targets", "names " + target.dump() + " twice", "list each projection once");
      s.lora.targets.push_back(target.get<std::string>());
    }
  }
  checked_by_generator(r, p, s);
  return s;
}

ResNetSpec read_resnet(const Reader& r, const Json& n) {
  const std::string p = "resnet";
  r.only(n, p, {"image", "channels", "stem_width", "expansion", "stages", "classes"});
  ResNetSpec s;
  s.image = r.whole(n, p, "image", std::nullopt, 1, kMaxImage);
  s.channels = r.whole(n, p, "channels", 3, 1, kMaxWidth);
  s.stem_width = r.whole(n, p, "stem_width", 64, 1, kMaxWidth);
  s.expansion = r.whole(n, p, "expansion", 4, 1, 64);
  s.classes = r.whole(n, p, "classes", std::nullopt, 1, kMaxVocab);
  const Json& stages = r.need(n, p, "stages");
  if (!stages.is_array()) r.fail(p + ".stages", "must be a list of {\"blocks\", \"width\", \"stride\"}");
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const std::string sp = p + ".stages[" + std::to_string(i) + "]";
    r.only(stages[i], sp, {"blocks", "width", "stride"});
    s.stages.push_back({r.whole(stages[i], sp, "blocks", std::nullopt, 1, kMaxLayers), r.whole(stages[i], sp, "width", std::nullopt, 1, kMaxWidth),
                        r.whole(stages[i], sp, "stride", 1, 1, 2)});
  }
  checked_by_generator(r, p, s);
  return s;
}

}  // namespace

WorkloadFileError::WorkloadFileError(const std::string& file, int line, const std::string& key,
                                     const std::string& reason, const std::string& hint)
    : std::runtime_error(render(file, line, key, reason, hint)), key_(key) {}

Workload parse_workload(const std::string& text, const std::string& file) {
  Json doc;
  std::string twice;  // a field given twice: nlohmann keeps the last without a word
  try {
    doc = parse_json_noting_repeats(text, twice);
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number beyond a double
    const std::string what = json_error_reason(e);
    // The line of the byte where parsing stopped, for the usual file:line prefix.
    int line = 0;
    if (const auto* parse = dynamic_cast<const Json::parse_error*>(&e)) {
      const auto end = text.begin() + static_cast<long>(std::min<std::size_t>(parse->byte, text.size()));
      line = 1 + static_cast<int>(std::count(text.begin(), end, '\n'));
    }
    throw WorkloadFileError(file, line, "", "is not valid JSON (" + what + ")");
  }
  const Reader r(text, file);
  if (!twice.empty()) r.fail_at_repeat(twice);
  r.only(doc, "", {"name", "title", "architecture", "sources", "published_parameters", "transformer", "resnet"});
  Workload w;
  w.name = r.text(doc, "", "name", true);
  w.title = r.text(doc, "", "title", true);
  const Family family = r.choice(doc, "", "architecture", families(), std::optional<Family>{});
  w.family = families().name(family);
  const Json& sources = r.need(doc, "", "sources");
  if (!sources.is_array() || sources.empty()) r.fail("sources", "must list at least one source (URL, paper or arXiv)");
  for (const auto& source : sources) {
    if (!source.is_string()) r.fail("sources", "must hold strings, not " + Reader::short_dump(source));
    w.sources.push_back(r.checked_text(source.get<std::string>(), "sources"));
  }
  if (doc.contains("published_parameters")) {
    const Json& pub = doc.at("published_parameters");
    r.only(pub, "published_parameters", {"value", "source", "note"});
    const Json& value = r.need(pub, "published_parameters", "value");
    if (!value.is_number() || value.get<double>() <= 0)
      r.fail("published_parameters.value", "must be a positive number");
    w.published_parameters.value = value.get<double>();
    w.published_parameters.source = r.text(pub, "published_parameters", "source", true);
    w.published_parameters.note = r.text(pub, "published_parameters", "note", false);
  }
  // The section of the other family would be ignored: refuse it.
  const std::string mine = w.family, other = family == Family::Transformer ? "resnet" : "transformer";
  if (doc.contains(other)) r.fail(other, "does not apply to architecture " + mine, "remove it");
  const Json& section = r.need(doc, "", mine);
  if (family == Family::Transformer) {
    const TransformerSpec spec = read_transformer(r, section);
    w.layers = transformer_layers(spec);
    w.sample = "sequence";
    w.tokens_per_sample = spec.sequence;
  } else {
    w.layers = resnet_layers(read_resnet(r, section));
    w.sample = "image";
  }
  return w;
}

Workload load_workload(const std::string& path) {
  // A FIFO or a device would block or never end: refused before reading, as every input file is (input_file.hpp).
  InputFileProblem problem;
  const std::optional<std::string> content = read_input_file(path, kMaxTextInputBytes, problem);
  if (!content) {
    using Kind = InputFileProblem::Kind;
    throw WorkloadFileError(path, 0, "", problem.reason,
                            problem.kind == Kind::Missing      ? "check the path, or name a catalog workload"
                            : problem.kind == Kind::TooLarge   ? "is it the right file?"
                            : problem.kind == Kind::Unreadable ? "check the path and its permissions"
                                                               : "give a .json file or a catalog name");
  }
  const std::string& text = *content;
  Workload w = parse_workload(text, path);
  // The catalog finds a workload by its file name: the two must agree.
  const std::string stem = std::filesystem::path(path).stem().string();
  if (w.name != stem) {
    const Reader r(text, path);
    r.fail("name", "is " + json_quoted(w.name) + " but the file is " + stem + ".json", "make them the same");
  }
  return w;
}

std::vector<std::string> catalog_files(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  if (ec) throw WorkloadFileError(dir, 0, "", "cannot be read (" + ec.message() + ")", "set DTSIM_WORKLOAD_DIR");
  // By workload name: "llama-7b" before "llama-7b-lora" (a plain sort of the paths puts '-' before '.').
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    return std::filesystem::path(a).stem() < std::filesystem::path(b).stem();
  });
  return files;
}

namespace {

bool is_workload_path(const std::string& name_or_path) {
  return name_or_path.find('/') != std::string::npos || std::filesystem::path(name_or_path).extension() == ".json";
}

}  // namespace

std::string workload_file(const std::string& name_or_path, const std::string& dir) {
  return is_workload_path(name_or_path) ? name_or_path : dir + "/" + name_or_path + ".json";
}

std::vector<std::string> catalog_names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& f : catalog_files(dir)) names.push_back(std::filesystem::path(f).stem().string());
  return names;
}

bool is_catalog_miss(const std::string& name_or_path, const std::string& dir) {
  std::error_code ec;
  return !is_workload_path(name_or_path) &&
         std::filesystem::symlink_status(workload_file(name_or_path, dir), ec).type() ==
             std::filesystem::file_type::not_found;
}

Workload find_workload(const std::string& name_or_path, const std::string& dir) {
  const std::string path = workload_file(name_or_path, dir);
  if (!is_catalog_miss(name_or_path, dir)) return load_workload(path);  // a path is read, or refused, as it is
  throw WorkloadFileError(name_or_path, 0, "", "is not a catalog workload or a .json file",
                          "known: " + join_names(catalog_names(dir), ", ", ", "));
}

}  // namespace dtsim::models
