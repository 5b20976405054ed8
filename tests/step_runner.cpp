#include "tests/step_runner.h"

#include <cuda_runtime.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#if !defined(LADDER_STEPS_FILE) || !defined(LADDER_FOLDERS_FILE)
#error "LADDER_STEPS_FILE and LADDER_FOLDERS_FILE must name the generated lists"
#endif

namespace ladder_test {
namespace {

const std::map<std::string, std::string>& registered() {
  static const std::map<std::string, std::string> steps = [] {
    std::map<std::string, std::string> m;
    std::ifstream f(LADDER_STEPS_FILE);
    std::string line;
    while (std::getline(f, line)) {
      auto eq = line.find('=');
      if (eq != std::string::npos) m[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return m;
  }();
  return steps;
}

// "folder.key" -> its values, in declaration order.
const std::map<std::string, std::vector<std::string>>& folder_declarations() {
  static const std::map<std::string, std::vector<std::string>> decl = [] {
    std::map<std::string, std::vector<std::string>> m;
    std::ifstream f(LADDER_FOLDERS_FILE);
    std::string line;
    while (std::getline(f, line)) {
      auto eq = line.find('=');
      if (eq != std::string::npos) m[line.substr(0, eq)].push_back(line.substr(eq + 1));
    }
    return m;
  }();
  return decl;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::vector<std::string> steps_of(const std::string& folder) {
  std::vector<std::string> ids;
  for (const auto& [id, path] : registered())
    if (id.rfind(folder + "/", 0) == 0) ids.push_back(id);
  return ids;  // std::map keeps "folder/NN_name" sorted, i.e. in ladder order
}

std::vector<std::string> all_steps() {
  std::vector<std::string> ids;
  for (const auto& [id, path] : registered()) ids.push_back(id);
  return ids;
}

std::vector<std::string> folder_values(const std::string& folder, const std::string& key) {
  auto it = folder_declarations().find(folder + "." + key);
  return it == folder_declarations().end() ? std::vector<std::string>{} : it->second;
}

std::vector<std::string> tunable_steps(const std::string& folder) {
  std::vector<std::string> ids;
  for (const std::string& name : folder_values(folder, "tunable")) ids.push_back(folder + "/" + name);
  return ids;
}

std::vector<std::string> help_choices(const std::string& id, const std::string& flag) {
  const std::string help = run_step(id, {"--help"}).output;
  const size_t at = help.find(flag + " ");
  if (at == std::string::npos) return {};
  const size_t from = help.find("(one of:", at), to = help.find(';', from);
  if (from == std::string::npos || to == std::string::npos) return {};
  std::istringstream list(help.substr(from + 8, to - from - 8));
  std::vector<std::string> names;
  for (std::string name; list >> name;) names.push_back(name);
  return names;
}

std::vector<std::string> declared_folders() {
  std::vector<std::string> folders;
  for (const auto& [key, values] : folder_declarations())
    if (key.size() > 11 && key.compare(key.size() - 11, 11, ".size_flags") == 0)
      folders.push_back(key.substr(0, key.size() - 11));
  return folders;
}

std::vector<std::string> split_args(const std::string& words) {
  std::vector<std::string> out;
  std::istringstream in(words);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

std::string folder_of(const std::string& step_id) { return step_id.substr(0, step_id.find('/')); }

std::vector<std::string> test_size(const std::string& id) {
  const std::string folder = folder_of(id);
  auto v = folder_values(folder, "test_args." + id.substr(id.find('/') + 1));
  if (v.empty()) v = folder_values(folder, "test_args");
  return v.empty() ? std::vector<std::string>{} : split_args(v.front());
}

std::string step_path(const std::string& id) {
  auto it = registered().find(id);
  return it == registered().end() ? std::string() : it->second;
}

StepRun run_step(const std::string& id, const std::vector<std::string>& args,
                 const std::vector<std::string>& env) {
  StepRun r;
  std::string cmd = env.empty() ? "" : "env ";  // a quoted NAME=value is no assignment to sh
  for (const auto& e : env) cmd += shell_quote(e) + " ";
  cmd += shell_quote(step_path(id));
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " 2>&1";
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, got);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  size_t pos = 0;
  while (pos < r.output.size()) {
    size_t end = r.output.find('\n', pos);
    if (end == std::string::npos) end = r.output.size();
    if (r.output[pos] == '{') r.json = r.output.substr(pos, end - pos);
    pos = end + 1;
  }
  return r;
}

CaseRun run_case(const std::string& id, const std::vector<std::string>& size_args, bool dump) {
  CaseRun c;
  std::vector<std::string> args = size_args;
  args.insert(args.end(), {"--json", "--no-ceiling", "--reps", "1", "--warmup", "0", "--seed",
                           std::to_string(fresh_seed())});
  if (dump) {
    c.dump = std::make_shared<TempDir>();
    c.dump_dir = c.dump->path();
    args.insert(args.end(), {"--dump", c.dump_dir});
  }
  c.run = run_step(id, args);
  return c;
}

testing::AssertionResult verified_run(const StepRun& r) {
  if (r.exit_code != 0)
    return testing::AssertionFailure() << "exit code " << r.exit_code << "\n" << r.output;
  if (r.json.empty()) return testing::AssertionFailure() << "no JSON record\n" << r.output;
  if (!json_bool(r.json, "verified")) return testing::AssertionFailure() << "not verified: " << r.json;
  if (!(json_number(r.json, "median") > 0)) return testing::AssertionFailure() << "no time: " << r.json;
  return testing::AssertionSuccess();
}

int device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    cudaGetLastError();
    return n;
  }();
  return count;
}

bool gpu_available() { return device_count() > 0; }

namespace {
size_t value_pos(const std::string& json, const std::string& key) {
  std::string k = "\"" + key + "\":";
  size_t p = json.find(k);
  return p == std::string::npos ? p : p + k.size();
}
}  // namespace

bool json_has(const std::string& json, const std::string& key) {
  return value_pos(json, key) != std::string::npos;
}

bool json_bool(const std::string& json, const std::string& key) {
  size_t p = value_pos(json, key);
  return p != std::string::npos && json.compare(p, 4, "true") == 0;
}

double json_number(const std::string& json, const std::string& key) {
  size_t p = value_pos(json, key);
  if (p == std::string::npos) return NAN;
  return std::strtod(json.c_str() + p, nullptr);
}

int64_t NpyArray::count() const {
  int64_t c = 1;
  for (int64_t d : shape) c *= d;
  return c;
}

NpyArray read_npy(const std::string& path) {
  NpyArray a;
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    ADD_FAILURE() << "cannot open " << path;
    return a;
  }
  char pre[10];
  f.read(pre, 10);
  if (!f || std::memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] != 1) {
    ADD_FAILURE() << path << ": not an .npy v1 file";
    return a;
  }
  size_t hlen = static_cast<unsigned char>(pre[8]) | (static_cast<unsigned char>(pre[9]) << 8);
  std::string h(hlen, '\0');
  f.read(&h[0], static_cast<std::streamsize>(hlen));
  auto d = h.find("'descr': '");
  auto s = h.find("'shape': (");
  if (d == std::string::npos || s == std::string::npos || (10 + hlen) % 64 != 0) {
    ADD_FAILURE() << path << ": malformed header " << h;
    return a;
  }
  a.descr = h.substr(d + 10, h.find('\'', d + 10) - (d + 10));
  std::string dims = h.substr(s + 10, h.find(')', s) - (s + 10));
  for (size_t i = 0; i < dims.size();) {
    size_t j = dims.find(',', i);
    std::string tok = dims.substr(i, j == std::string::npos ? std::string::npos : j - i);
    if (tok.find_first_of("0123456789") != std::string::npos) a.shape.push_back(std::stoll(tok));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  size_t elem = a.descr.back() == '8' ? 8 : 4;
  a.data.resize(static_cast<size_t>(a.count()) * elem);
  f.read(a.data.data(), static_cast<std::streamsize>(a.data.size()));
  if (!f) ADD_FAILURE() << path << ": short data";
  return a;
}

TempDir::TempDir() {
  static std::mt19937_64 rng(std::random_device{}());
  auto dir = std::filesystem::temp_directory_path() / ("ladder_test_" + std::to_string(rng()));
  std::filesystem::create_directories(dir);
  path_ = dir.string();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

uint64_t fresh_seed() {
  static std::mt19937_64 rng(std::random_device{}() ^
                             static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  return rng() >> 1;  // the CLI takes seeds up to 2^63 - 1
}

std::string param_name(const std::string& step_id, const std::string& suffix) {
  std::string n = step_id.substr(step_id.find('/') + 1) + "_" + suffix;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

}  // namespace ladder_test
