#include "tests/step_runner.h"

#include "common/device.h"

#include <cuda_runtime.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
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

ladder::Requirement requirement_of(const std::string& id) {
  const auto v = folder_values(folder_of(id), "needs." + id.substr(id.find('/') + 1));
  if (v.empty()) return {};
  const std::string& line = v.front();  // "sm_80 cp.async"
  const size_t space = line.find(' ');
  return ladder::parse_requirement(line.substr(0, space), space == std::string::npos ? "" : line.substr(space + 1));
}

std::string SeenDevice::sm() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }

SeenDevice seen_device(const std::vector<std::string>& env) {
  SeenDevice d;
  if (!gpu_available()) return d;
  const GpuProbe& real = seen_gpus();
  d.present = true;
  d.cc_major = real.cc_major;
  d.cc_minor = real.cc_minor;
  d.sm_count = real.sm_count;
  d.smem_per_block_optin = real.smem_per_block_optin;
  std::string key;
  if (const char* e = std::getenv("LADDER_DEVICE_PROFILE")) key = e;
  for (const std::string& e : env)
    if (e.rfind("LADDER_DEVICE_PROFILE=", 0) == 0) key = e.substr(22);
  if (key.empty()) return d;
  const ladder::DeviceProfile* p = ladder::find_device_profile(key);
  if (!p) return d;  // an unknown profile: the step exits 2 with a usage error, which judge() fails
  d.profile = key;
  d.cc_major = p->cc_major;
  d.cc_minor = p->cc_minor;
  d.sm_count = std::min(d.sm_count, p->sm_count);
  d.smem_per_block_optin = std::min(d.smem_per_block_optin, p->smem_per_block_optin);
  return d;
}

std::string unsupported_line(const std::string& output) {
  const std::string tag = "unsupported: ";
  for (size_t at = output.find(tag); at != std::string::npos; at = output.find(tag, at + 1))
    if (at == 0 || output[at - 1] == '\n') {
      const size_t end = output.find('\n', at);
      return output.substr(at + tag.size(), end == std::string::npos ? std::string::npos : end - at - tag.size());
    }
  return "";
}

Verdict judge(const std::string& id, const StepRun& r, const std::vector<std::string>& env) {
  Verdict v;
  if (r.exit_code == 0) {
    const testing::AssertionResult ok = verified_run(r);
    v.kind = ok ? Verdict::verified : Verdict::failed;
    v.reason = ok ? "" : ok.message();
    return v;
  }
  const std::string line = unsupported_line(r.output);
  if (r.exit_code != 2 || line.empty()) {
    v.reason = id + ": exit code " + std::to_string(r.exit_code) + "\n" + r.output;
    return v;
  }
  const SeenDevice dev = seen_device(env);
  const ladder::Requirement needs = requirement_of(id);
  // Whether the seen device meets the declaration, worked out here rather than by the step's own
  // Requirement::met_by, so that a wrong comparison in the step cannot agree with itself.
  const int have = dev.cc_major * 10 + dev.cc_minor, need = needs.cc_major * 10 + needs.cc_minor;
  const bool met = !needs.any() || (needs.exact ? have == need : have >= need);
  // The architecture: the step's own declaration, against the seen device.
  if (line.rfind(id + " needs sm_", 0) == 0) {
    if (!needs.any() || line.rfind(id + " needs " + needs.text() + ";", 0) != 0) {
      v.reason = id + " refused with a requirement that is not its declared one (" + needs.text() + "): " + line;
    } else if (met) {
      v.reason = id + " refused although this GPU (" + dev.sm() + (dev.profile.empty() ? "" : ", profile " + dev.profile) +
                 ") meets its declared requirement, " + needs.text() + ": " + line;
    } else {
      v.kind = Verdict::skipped;
      v.reason = "needs " + needs.arch() + " — " + line;
    }
    return v;
  }
  // Shared memory: the bytes asked for must be more than the seen device's limit, which the step must
  // have named right.
  const std::string mid = " bytes of shared memory per block; this GPU (", allows = ") allows ";
  const size_t m = line.find(mid), a = line.rfind(allows);
  if (m != std::string::npos && a != std::string::npos && a > m) {
    const size_t digits = line.find_last_not_of("0123456789", m - 1) + 1;
    const unsigned long long asked = std::strtoull(line.c_str() + digits, nullptr, 10);
    const unsigned long long limit = std::strtoull(line.c_str() + a + allows.size(), nullptr, 10);
    if (limit != dev.smem_per_block_optin) {
      v.reason = id + " refused naming " + std::to_string(limit) + " bytes of shared memory per block as the limit; this GPU's is " +
                 std::to_string(dev.smem_per_block_optin) + ": " + line;
    } else if (asked <= limit) {
      v.reason = id + " refused for shared memory it has (" + std::to_string(asked) + " <= " + std::to_string(limit) + "): " + line;
    } else {
      v.kind = Verdict::skipped;
      v.reason = "too little shared memory — " + line;
    }
    return v;
  }
  v.reason = id + ": exit 2, unsupported for a reason no test accepts: " + line;
  return v;
}

testing::AssertionResult verified_or_justified(const std::string& id, const StepRun& r, const std::string& what,
                                               std::vector<std::string>* skipped, const std::vector<std::string>& env) {
  const Verdict v = judge(id, r, env);
  if (v.kind == Verdict::failed) return testing::AssertionFailure() << what << ": " << v.reason;
  if (v.kind == Verdict::skipped) skipped->push_back(what + ": " + v.reason);
  return testing::AssertionSuccess();
}

bool cuobjdump_installed() {
  static const bool installed = std::system("command -v cuobjdump >/dev/null 2>&1") == 0;
  return installed;
}

std::string cuobjdump(const std::string& option, const std::string& id) {
  if (!cuobjdump_installed()) return "";
  std::string out;
  const std::string cmd = "cuobjdump " + option + " " + shell_quote(step_path(id)) + " 2>&1";
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    ADD_FAILURE() << "cannot run " << cmd;
    return "";
  }
  char buf[65536];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, got);
  const int status = pclose(p);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ADD_FAILURE() << cmd << " failed:\n" << out.substr(0, 2000);
    return "";
  }
  return out;
}

const std::string& step_sass(const std::string& id) {
  static std::map<std::string, std::string> cache;
  auto it = cache.find(id);
  if (it != cache.end()) return it->second;
  return cache[id] = cuobjdump("-sass", id);
}

std::vector<ArchInstruction> arch_instructions_in(const std::string& id) {
  static const struct {
    const char* opcode;
    const char* arch;
    const char* feature;
  } kTable[] = {{"LDGSTS", "sm_80", "cp.async"},
                {"HMMA.1684.F32.TF32", "sm_80", "TF32 tensor cores"},
                {"HMMA.1688.F32.TF32", "sm_80", "TF32 tensor cores"},
                {"DMMA", "sm_80", "fp64 tensor cores"},
                {"UTMALDG", "sm_90", "TMA"},
                {"HGMMA", "sm_90a", "wgmma"},
                {"USETMAXREG", "sm_90a", "setmaxnreg"}};
  std::vector<ArchInstruction> found;
  const std::string& sass = step_sass(id);
  for (const auto& t : kTable)
    if (sass.find(t.opcode) != std::string::npos) found.push_back({t.opcode, ladder::parse_requirement(t.arch, t.feature)});
  return found;
}

GpuProbe probe_gpu() {
  GpuProbe p;
  p.visible = visible_devices();
  if (cudaGetDeviceCount(&p.device_count) != cudaSuccess) p.device_count = 0;
  cudaGetLastError();
  cudaDeviceProp props{};
  if (p.device_count > 0 && cudaGetDeviceProperties(&props, 0) == cudaSuccess) {
    p.cc_major = props.major;
    p.cc_minor = props.minor;
    p.sm_count = props.multiProcessorCount;
    p.smem_per_block_optin = props.sharedMemPerBlockOptin;
    p.name = props.name;
  }
  cudaGetLastError();
  return p;
}

std::string visible_devices() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  return v ? v : "(unset)";
}

std::string gpu_probe_file(const std::string& stem) {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!v) return stem + ".all";
  std::string key = "cvd_";
  for (const char c : std::string(v)) key += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return stem + "." + key;
}

bool write_gpu_probe(const std::string& path, const GpuProbe& p) {
  // Written beside the file and renamed over it, so that a reader never sees half of one.
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    out << "device_count " << p.device_count << "\ncc " << p.cc_major << " " << p.cc_minor
        << "\nsm_count " << p.sm_count << "\nsmem_per_block_optin " << p.smem_per_block_optin << "\nname " << p.name << "\nvisible "
        << p.visible << "\n";
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

bool read_gpu_probe(const std::string& path, GpuProbe* p) {
  std::ifstream in(path);
  if (!in) return false;
  GpuProbe r;
  int fields = 0;
  std::string key;
  while (in >> key) {
    if (key == "device_count" && in >> r.device_count) ++fields;
    else if (key == "cc" && in >> r.cc_major >> r.cc_minor) ++fields;
    else if (key == "sm_count" && in >> r.sm_count) ++fields;
    else if (key == "smem_per_block_optin" && in >> r.smem_per_block_optin) ++fields;
    else if (key == "name" || key == "visible") {
      std::string rest;
      std::getline(in, rest);
      (key == "name" ? r.name : r.visible) = rest.empty() ? "" : rest.substr(1);  // after the space
      ++fields;
    } else
      return false;
  }
  if (fields != 6 || r.device_count < 0) return false;
  *p = r;
  return true;
}

const GpuProbe& seen_gpus() {
  static const GpuProbe seen = [] {
    GpuProbe p;
    if (const char* stem = std::getenv("LADDER_GPU_PROBE"); stem && *stem)
      if (read_gpu_probe(gpu_probe_file(stem), &p) && p.visible == visible_devices()) return p;
    return probe_gpu();
  }();
  return seen;
}

int device_count() { return seen_gpus().device_count; }

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

std::string json_string(const std::string& json, const std::string& key) {
  size_t p = value_pos(json, key);
  if (p == std::string::npos || p >= json.size() || json[p] != '"') return "";
  std::string out;
  for (++p; p < json.size() && json[p] != '"'; ++p) {
    if (json[p] != '\\' || p + 1 >= json.size()) {
      out += json[p];
      continue;
    }
    const char e = json[++p];
    if (e == 'n') out += '\n';
    else if (e == 't') out += '\t';
    else if (e == 'r') out += '\r';
    else if (e == 'u' && p + 4 < json.size()) {
      out += static_cast<char>(std::strtol(json.substr(p + 1, 4).c_str(), nullptr, 16));
      p += 4;
    } else out += e;  // \" \\ \/
  }
  return out;
}

std::string choice_name(const std::string& json) {
  const std::string choice = json_string(json, "choice");
  return choice.substr(0, std::min(choice.find(':'), choice.find(" (")));
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
