// SPDX-License-Identifier: BSD-3-Clause
// redist-replay TRACE_FILES...: re-runs the ScaLAPACK calls a REDIST_TRACE=calls run recorded (docs/trace.md), at
// the recorded rank count, on synthetic data of the recorded shapes with the recorded descriptors, through
// ScaLAPACK and through redist (the drop-in's path: p?gemm and p?tran* handed to ScaLAPACK as the drop-in would) in the
// same run, interleaved; checks that both give the same results; prints per signature class (routine, grid, shape
// class) the median times and their ratio, and the whole trace's, as a table, JSON (--json) and a SUMMARY line.
// See docs/trace.md, "Replay".
#include <mpi.h>

#include <dlfcn.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../bench/common/baseline.hpp"
#include "../bench/common/usage.hpp"
#include "../src/scalapack/dropin.hpp"
#include "redist/redist.h"
#include "redist/scalapack/descriptor.hpp"
#include "redist/trace.hpp"

extern "C" {
void Cblacs_gridmap(int* context, int* usermap, int ldumap, int proc_rows, int proc_cols);
void Cblacs_barrier(int context, const char* scope);
void Cblacs_gridexit(int context);
}

namespace {

const char* const usage_text =
    "usage: mpiexec -n R redist-replay [--rounds N] [--noise-floor] [--cold] [--json FILE] TRACE_FILE...\n"
    "  Replays the ScaLAPACK calls of REDIST_TRACE=calls files (one per rank of the recorded run, any order;\n"
    "  R = the recorded rank count) through ScaLAPACK and through redist, interleaved, N rounds (default 5;\n"
    "  short calls, below 2^24 multiply-adds or 2^16 elements, 4N): results compared, median times per\n"
    "  signature class and for the whole trace, ratio redist/ScaLAPACK, and the paths redist took (one more\n"
    "  run of each call, traced).\n"
    "  --noise-floor: both sides run ScaLAPACK (the redist columns time ScaLAPACK again): each ratio is how\n"
    "  far from 1 the same code reads here, the harness's noise floor for that class on this machine.\n"
    "  --cold: each round as a program's one run: the grids are made again before it, so the drop-in's learned\n"
    "  classes, checked signatures and cached plans start empty (its first calls' trials and planning timed).\n"
    "  Exit status 0: every result agreed; 1: a result differed or a call failed; 2: wrong arguments or traces.\n";

// ---- a JSON value, as much of JSON as the trace lines use --------------------------------------------------------
struct json {
  enum kind_t { null, number, text, array, object } kind = null;
  double num = 0;
  std::string str;
  std::vector<json> items;
  std::vector<std::pair<std::string, json>> fields;

  const json* find(const std::string& key) const {
    for (const auto& [k, v] : fields)
      if (k == key) return &v;
    return nullptr;
  }
  const json& at(const std::string& key) const {
    const json* v = find(key);
    if (v == nullptr) throw std::runtime_error("no field \"" + key + "\"");
    return *v;
  }
  std::int64_t integer() const {
    if (kind != number) throw std::runtime_error("expected a number");
    return static_cast<std::int64_t>(num);
  }
};

class json_parser {
 public:
  explicit json_parser(const std::string& text) : s_(text) {}
  json parse() {
    json v = value();
    space();
    if (at_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error("JSON: " + why + " at character " + std::to_string(at_));
  }
  void space() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
  }
  bool take(char c) {
    space();
    if (at_ < s_.size() && s_[at_] == c) return ++at_, true;
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  std::string string_literal() {
    expect('"');
    std::string out;
    while (at_ < s_.size() && s_[at_] != '"') {
      char c = s_[at_++];
      if (c == '\\') {
        if (at_ >= s_.size()) fail("unfinished escape");
        c = s_[at_++];
        if (c == 'u') {
          if (at_ + 4 > s_.size()) fail("unfinished \\u escape");
          c = static_cast<char>(std::stoi(s_.substr(at_, 4), nullptr, 16));
          at_ += 4;
        } else if (c == 'n') {
          c = '\n';
        } else if (c == 't') {
          c = '\t';
        }
      }
      out += c;
    }
    expect('"');
    return out;
  }
  json value() {
    space();
    if (at_ >= s_.size()) fail("unexpected end");
    json v;
    const char c = s_[at_];
    if (c == '{') {
      ++at_;
      v.kind = json::object;
      if (take('}')) return v;
      do {
        std::string key = string_literal();
        expect(':');
        v.fields.emplace_back(std::move(key), value());
      } while (take(','));
      expect('}');
    } else if (c == '[') {
      ++at_;
      v.kind = json::array;
      if (take(']')) return v;
      do v.items.push_back(value());
      while (take(','));
      expect(']');
    } else if (c == '"') {
      v.kind = json::text;
      v.str = string_literal();
    } else if (s_.compare(at_, 4, "null") == 0) {
      at_ += 4;
    } else {
      char* end = nullptr;
      v.num = std::strtod(s_.c_str() + at_, &end);
      if (end == s_.c_str() + at_) fail("not a value");
      v.kind = json::number;
      at_ = static_cast<std::size_t>(end - s_.c_str());
    }
    return v;
  }
  const std::string& s_;
  std::size_t at_ = 0;
};

std::vector<int> integers(const json& v) {
  std::vector<int> out;
  if (v.kind == json::null) return out;
  for (const json& item : v.items) out.push_back(static_cast<int>(item.integer()));
  return out;
}

// ---- the recorded calls ------------------------------------------------------------------------------------------
enum class routine_kind { gemm, gemr2d, trmr2d, tran };

// One recorded call of one rank. Operands are named by their role: gemm A, B -> C; gemr2d/trmr2d A -> B (B as
// "c" below); tran A -> C.
struct recorded_call {
  int rank = 0;
  std::int64_t seq = 0;
  std::string entry;  // "PDGEMM"
  routine_kind kind = routine_kind::gemm;
  char type = 'D';
  std::string path;  // as recorded
  json args;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The routines the replay knows, by the trace's entry point.
bool classify(const std::string& entry, routine_kind& kind, char& type) {
  if (entry.size() < 5 || entry[0] != 'P') return false;
  type = entry[1];
  const std::string rest = entry.substr(2);
  if (rest == "GEMM" && std::strchr("SDCZ", type)) return kind = routine_kind::gemm, true;
  if (rest == "GEMR2D" && std::strchr("ISDCZ", type)) return kind = routine_kind::gemr2d, true;
  if (rest == "TRMR2D" && std::strchr("ISDCZ", type)) return kind = routine_kind::trmr2d, true;
  if ((rest == "TRAN" && std::strchr("SD", type)) || ((rest == "TRANU" || rest == "TRANC") && std::strchr("CZ", type)))
    return kind = routine_kind::tran, true;
  return false;
}

// A BLACS grid of the recorded run: its context handle on the recorded ranks, and shape.
using grid_key = std::tuple<int, int, int>;  // recorded CTXT, NPROW, NPCOL

// The grid fields of a call: (CTXT as recorded, [NPROW, NPCOL, MYROW, MYCOL, size]) for each context it names.
std::vector<std::pair<int, std::vector<int>>> grids_of(const recorded_call& c) {
  std::vector<std::pair<int, std::vector<int>>> out;
  const auto ctxt_of = [&](const char* desc) {
    const std::vector<int> d = integers(c.args.at(desc));
    return d.size() >= 2 ? d[1] : -1;
  };
  if (c.kind == routine_kind::gemm || c.kind == routine_kind::tran) {
    out.emplace_back(ctxt_of("desca"), integers(c.args.at("grid")));
  } else {
    out.emplace_back(ctxt_of("desca"), integers(c.args.at("grid_a")));
    out.emplace_back(ctxt_of("descb"), integers(c.args.at("grid_b")));
    out.emplace_back(static_cast<int>(c.args.at("ictxt").integer()), integers(c.args.at("grid")));
  }
  return out;
}

struct replay_grid {
  int rows = 0, cols = 0;
  std::map<int, std::pair<int, int>> positions;  // world rank -> (row, col)
  int context = -1;                              // this rank's new context (-1: not on the grid)
};

// ---- operands ------------------------------------------------------------------------------------------------
template <class T>
T random_value(std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return T(static_cast<typename T::value_type>(u(g)), static_cast<typename T::value_type>(u(g)));
  else if constexpr (std::is_same_v<T, int>)
    return static_cast<int>(u(g) * 1000);
  else
    return static_cast<T>(u(g));
}

// This rank's part of the sub-matrix a call writes, in its local array: local rows [row0, row0 + rows) of local
// columns [col0, col0 + cols), columns lld elements apart, elements of `element` bytes. A round after the first
// resets and copies only this part, so that a call finds the caches as its neighbours in a solver leave them (the
// sub-matrices they work on), not emptied by a copy of the whole local array, which a real code never makes
// between two calls.
struct output_window {
  std::int64_t row0 = 0, rows = 0, col0 = 0, cols = 0, lld = 0;
  std::size_t element = 0;
  template <class Visit>  // visit(byte offset, bytes) for each column's part
  void for_each_column(Visit&& visit) const {
    for (std::int64_t c = col0; c < col0 + cols; ++c)
      visit(static_cast<std::size_t>((c * lld + row0)) * element, static_cast<std::size_t>(rows) * element);
  }
};

// Elements of this rank's local array of a descriptor (0 off its grid).
std::int64_t local_elements(const std::vector<int>& d, const replay_grid* g, int me) {
  if (g == nullptr || g->context < 0 || d.size() < 9) return 0;
  const int col = g->positions.at(me).second;
  const bool two = d[0] == 2 && d.size() >= 11;  // DTYPE 2: INB at 5, NB at 7; DTYPE 1: NB (also the first) at 5
  const std::int64_t n = d[3], inb = d[5], nb = two ? d[7] : d[5], csrc = two ? d[9] : d[7];
  const std::int64_t lld = two ? d[10] : d[8];
  if (csrc < 0) return 0;
  const std::int64_t cols = redist::scalapack::numroc(n, inb, nb, col, csrc, g->cols);
  return lld * std::max<std::int64_t>(cols, 1);
}

// This rank's part of the m x n sub-matrix at (i, j) (1-based) of a descriptor's matrix (empty off its grid): the
// local indices of the global rows and columns it owns there, which are consecutive in its local array.
output_window local_window(const std::vector<int>& d, const replay_grid* g, int me, std::int64_t i, std::int64_t j,
                           std::int64_t m, std::int64_t n, std::size_t element) {
  output_window w;
  if (g == nullptr || g->context < 0 || d.size() < 9 || m <= 0 || n <= 0 || i < 1 || j < 1) return w;
  const auto [row, col] = g->positions.at(me);
  const bool two = d[0] == 2 && d.size() >= 11;
  const std::int64_t imb = d[4], inb = d[5], mb = two ? d[6] : d[4], nb = two ? d[7] : d[5];
  const std::int64_t rsrc = two ? d[8] : d[6], csrc = two ? d[9] : d[7];
  using redist::scalapack::numroc;
  w.row0 = numroc(i - 1, imb, mb, row, rsrc, g->rows);
  w.rows = numroc(i - 1 + m, imb, mb, row, rsrc, g->rows) - w.row0;
  w.col0 = numroc(j - 1, inb, nb, col, csrc, g->cols);
  w.cols = numroc(j - 1 + n, inb, nb, col, csrc, g->cols) - w.col0;
  w.lld = two ? d[10] : d[8];
  w.element = element;
  if (w.rows <= 0 || w.cols <= 0) w.rows = w.cols = 0;
  return w;
}

std::size_t element_bytes(char type) {
  switch (type) {
    case 'S':
      return sizeof(float);
    case 'D':
      return sizeof(double);
    case 'C':
      return sizeof(std::complex<float>);
    case 'Z':
      return sizeof(std::complex<double>);
    default:
      return sizeof(int);
  }
}

// An output matrix's local array: its initial values and where each side writes. Both sides write at `timed` (the
// same address: no side gains from its buffer's alignment or placement), copied to its side's result after the
// timed call.
struct output_buffers {
  std::vector<unsigned char> initial, timed, scalapack, redist;
};

// A call ready to run on this rank: descriptors with the new contexts, inputs filled, the output's initial values.
struct prepared_call {
  const recorded_call* call = nullptr;
  std::string signature_class;
  std::string shape;  // "m x n x k" as recorded
  bool short_call = false;
  std::string replayed_path;  // the path redist took, traced after the timed rounds
  std::vector<int> desca, descb, descc;
  int ictxt = -1;  // gemr2d/trmr2d: the context over both grids
  int barrier_context = -1;
  // Bytes of the routine's type, shared by the calls whose matrices have the same descriptor and type, as a
  // program's calls share its arrays (one buffer per call would hold a whole local matrix per call: 12 GB for the
  // N = 4000 solver trace). Inputs are only read; the output is reset before each timed call and compared right
  // after each pair, so no call sees another's writes where it looks.
  std::shared_ptr<const std::vector<unsigned char>> a, b;
  std::shared_ptr<output_buffers> c;
  output_window window;  // this rank's part of sub(C) (sub(B) of a copy) in the output's local array
  double alpha[2] = {1, 0}, beta[2] = {0, 0};
  std::int64_t k = 0;
  // Each side's times, [0] when it ran first of the pair, [1] when second.
  std::vector<double> seconds_scalapack[2], seconds_redist[2];
  bool agreed = true;
  double worst_difference = 0;
  std::function<void(void*)> scalapack, redist;  // bound once all calls are prepared (they point into this one)
};

template <class T>
void fill(std::vector<unsigned char>& bytes, std::int64_t elements, std::mt19937_64& g) {
  bytes.assign(static_cast<std::size_t>(elements) * sizeof(T), 0);
  T* p = reinterpret_cast<T*>(bytes.data());
  for (std::int64_t i = 0; i < elements; ++i) p[i] = random_value<T>(g);
}

void fill_typed(char type, std::vector<unsigned char>& bytes, std::int64_t elements, std::mt19937_64& g) {
  switch (type) {
    case 'S':
      return fill<float>(bytes, elements, g);
    case 'D':
      return fill<double>(bytes, elements, g);
    case 'C':
      return fill<std::complex<float>>(bytes, elements, g);
    case 'Z':
      return fill<std::complex<double>>(bytes, elements, g);
    default:
      return fill<int>(bytes, elements, g);
  }
}

// The largest difference between the two outputs, relative to the tolerance of the call (> 1: they differ): over
// the whole local arrays, or over the window alone (where a round after the first wrote them).
template <class T>
double difference(const prepared_call& p, bool whole) {
  const T* x = reinterpret_cast<const T*>(p.c->scalapack.data());
  const T* y = reinterpret_cast<const T*>(p.c->redist.data());
  double eps = 0;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>)
    eps = 1.2e-7;
  else if constexpr (!std::is_same_v<T, int>)
    eps = 2.3e-16;
  // Inputs in [-1, 1]: a sum of k products and beta * C, rounded in any order.
  const double scale = std::hypot(p.alpha[0], p.alpha[1]) * static_cast<double>(std::max<std::int64_t>(p.k, 1)) +
                       std::hypot(p.beta[0], p.beta[1]) + 1;
  const double tolerance = 8 * eps * static_cast<double>(p.k + 2) * scale;
  double worst = 0;
  const auto compare = [&](std::size_t first, std::size_t count) {
    for (std::size_t i = first; i < first + count; ++i) {
      const double d = std::abs(x[i] - y[i]);
      if (!(d <= tolerance)) worst = std::max(worst, tolerance > 0 ? d / tolerance : (d > 0 ? 2.0 : 0.0));
      if (std::isnan(d)) worst = 2;
    }
  };
  if (whole)
    compare(0, p.c->scalapack.size() / sizeof(T));
  else
    p.window.for_each_column(
        [&](std::size_t offset, std::size_t bytes) { compare(offset / sizeof(T), bytes / sizeof(T)); });
  return worst;
}

double difference_typed(char type, const prepared_call& p, bool whole) {
  switch (type) {
    case 'S':
      return difference<float>(p, whole);
    case 'D':
      return difference<double>(p, whole);
    case 'C':
      return difference<std::complex<float>>(p, whole);
    case 'Z':
      return difference<std::complex<double>>(p, whole);
    default:
      return difference<int>(p, whole);
  }
}

// ---- the two paths ---------------------------------------------------------------------------------------------
using gemm_fn = redist::scalapack::pblas_gemm_fn;
using gemr2d_fn = void (*)(const int*, const int*, const void*, const int*, const int*, const int*, void*, const int*,
                           const int*, const int*, const int*);
using trmr2d_fn = void (*)(const char*, const char*, const int*, const int*, const void*, const int*, const int*,
                           const int*, void*, const int*, const int*, const int*, const int*);
using tran_fn = redist::scalapack::pblas_tran_fn;

void* symbol(const std::string& name) {
  void* p = dlsym(RTLD_DEFAULT, name.c_str());
  if (p == nullptr) throw std::runtime_error("symbol " + name + " not found (is ScaLAPACK linked?)");
  return p;
}

using dropin_gemm_fn = void (*)(gemm_fn, const char*, const char*, const int*, const int*, const int*, const void*,
                                const void*, const int*, const int*, const int*, const void*, const int*, const int*,
                                const int*, const void*, void*, const int*, const int*, const int*);
dropin_gemm_fn dropin_gemm(char type) {
  switch (type) {
    case 'S':
      return redist::scalapack::dropin_psgemm;
    case 'D':
      return redist::scalapack::dropin_pdgemm;
    case 'C':
      return redist::scalapack::dropin_pcgemm;
    default:
      return redist::scalapack::dropin_pzgemm;
  }
}

using dropin_tran_fn = void (*)(tran_fn, const int*, const int*, const void*, const void*, const int*, const int*,
                                const int*, const void*, void*, const int*, const int*, const int*);
dropin_tran_fn dropin_tran(const std::string& name) {
  if (name == "pstran") return redist::scalapack::dropin_pstran;
  if (name == "pdtran") return redist::scalapack::dropin_pdtran;
  if (name == "pctranu") return redist::scalapack::dropin_pctranu;
  if (name == "pztranu") return redist::scalapack::dropin_pztranu;
  if (name == "pctranc") return redist::scalapack::dropin_pctranc;
  return redist::scalapack::dropin_pztranc;
}

// The call through ScaLAPACK (through_redist = false) or redist, writing C (B of a copy) at `out`: every argument
// looked up beforehand, so that a timed run is the call alone.
std::function<void(void*)> bind(const prepared_call& p, bool through_redist) {
  const recorded_call& c = *p.call;
  const std::string name = lower(c.entry);
  const json& a = c.args;
  const auto arg = [&](const char* key) { return a.find(key) ? static_cast<int>(a.at(key).integer()) : 0; };
  const std::string ta = a.find("transa") ? a.at("transa").str : "", tb = a.find("transb") ? a.at("transb").str : "";
  const std::string uplo = a.find("uplo") ? a.at("uplo").str : "", diag = a.find("diag") ? a.at("diag").str : "";
  const int m = arg("m"), n = arg("n"), k = arg("k"), ia = arg("ia"), ja = arg("ja"), ib = arg("ib"), jb = arg("jb"),
            ic = arg("ic"), jc = arg("jc");
  const void* A = p.a == nullptr || p.a->empty() ? nullptr : p.a->data();
  const void* B = p.b == nullptr || p.b->empty() ? nullptr : p.b->data();
  const int *da = p.desca.data(), *db = p.descb.data(), *dc = p.descc.data(), *ictxt = &p.ictxt;
  const double *alpha = p.alpha, *beta = p.beta;
  switch (c.kind) {
    case routine_kind::gemm: {
      const auto scalapack = reinterpret_cast<gemm_fn>(symbol(name + "_"));
      if (through_redist)
        return [=, f = dropin_gemm(c.type)](void* C) {
          f(scalapack, ta.c_str(), tb.c_str(), &m, &n, &k, alpha, A, &ia, &ja, da, B, &ib, &jb, db, beta, C, &ic, &jc,
            dc);
        };
      return [=](void* C) {
        scalapack(ta.c_str(), tb.c_str(), &m, &n, &k, alpha, A, &ia, &ja, da, B, &ib, &jb, db, beta, C, &ic, &jc, dc);
      };
    }
    case routine_kind::gemr2d: {
      const auto f = reinterpret_cast<gemr2d_fn>(symbol(through_redist ? "redist_" + name : name + "_"));
      return [=](void* C) { f(&m, &n, A, &ia, &ja, da, C, &ib, &jb, dc, ictxt); };
    }
    case routine_kind::trmr2d: {
      const auto f = reinterpret_cast<trmr2d_fn>(symbol(through_redist ? "redist_" + name : name + "_"));
      return [=](void* C) { f(uplo.c_str(), diag.c_str(), &m, &n, A, &ia, &ja, da, C, &ib, &jb, dc, ictxt); };
    }
    case routine_kind::tran:
    default: {
      const auto scalapack = reinterpret_cast<tran_fn>(symbol(name + "_"));
      if (through_redist)
        return [=, f = dropin_tran(name)](void* C) {
          f(scalapack, &m, &n, alpha, A, &ia, &ja, da, beta, C, &ic, &jc, dc);
        };
      return [=](void* C) { scalapack(&m, &n, alpha, A, &ia, &ja, da, beta, C, &ic, &jc, dc); };
    }
  }
}

// One timed run of a bound call: the output reset from its initial values, the call's grid synchronised, then the
// call; its output then kept as the side's result. `whole`: the whole local array reset and kept (the first round, whose
// comparison would see a write outside the sub-matrix), else the window alone.
double run(prepared_call& p, bool through_redist, bool whole) {
  output_buffers& c = *p.c;
  std::vector<unsigned char>& result = through_redist ? c.redist : c.scalapack;
  if (whole)
    std::copy(c.initial.begin(), c.initial.end(), c.timed.begin());
  else
    p.window.for_each_column([&](std::size_t offset, std::size_t bytes) {
      std::memcpy(c.timed.data() + offset, c.initial.data() + offset, bytes);
    });
  void* C = c.timed.empty() ? nullptr : c.timed.data();
  const std::function<void(void*)>& call = through_redist ? p.redist : p.scalapack;
  Cblacs_barrier(p.barrier_context, "A");
  const double start = MPI_Wtime();
  call(C);
  const double seconds = MPI_Wtime() - start;
  if (whole)
    result = c.timed;
  else
    p.window.for_each_column([&](std::size_t offset, std::size_t bytes) {
      std::memcpy(result.data() + offset, c.timed.data() + offset, bytes);
    });
  return seconds;
}

// ---- classes ---------------------------------------------------------------------------------------------------
// The power of two at or above x ("<= 512"), 0 for 0.
std::int64_t bucket(std::int64_t x) {
  std::int64_t b = 1;
  while (b < x) b *= 2;
  return x <= 0 ? 0 : b;
}

std::string grid_text(const std::vector<int>& g) {
  return g.size() >= 2 && g[0] > 0 ? std::to_string(g[0]) + "x" + std::to_string(g[1]) : "?";
}

// Routine, operations, grid(s) and size class (each dimension to the power of two at or above it); the exact
// shape separately. Every rank of a call computes the same class from its global arguments, grids included
// (a rank off a grid does not make the call).
std::pair<std::string, std::string> class_of(const recorded_call& c) {
  const json& a = c.args;
  const auto dim = [&](const char* key) { return a.at(key).integer(); };
  std::ostringstream cls, shape;
  cls << c.entry;
  if (c.kind == routine_kind::gemm) {
    cls << " " << a.at("transa").str << a.at("transb").str << " " << grid_text(integers(a.at("grid")));
    cls << " m<=" << bucket(dim("m")) << " n<=" << bucket(dim("n")) << " k<=" << bucket(dim("k"));
    shape << dim("m") << "x" << dim("n") << "x" << dim("k");
  } else {
    if (c.kind == routine_kind::tran) {
      cls << " " << grid_text(integers(a.at("grid")));
    } else {
      // Both grids as the call's context sees them: gathered by the caller (a rank may hold only one).
      cls << " " << a.at("grid_pair").str;
      if (c.kind == routine_kind::trmr2d) cls << " " << a.at("uplo").str << a.at("diag").str;
    }
    cls << " m<=" << bucket(dim("m")) << " n<=" << bucket(dim("n"));
    shape << dim("m") << "x" << dim("n");
  }
  return {cls.str(), shape.str()};
}

// A call of microseconds, whose median over N rounds one descheduling can move: it runs 4N rounds. Decided from the
// global arguments, so that every rank of the call's grid makes the same calls.
bool short_call(const recorded_call& c) {
  const json& a = c.args;
  const auto dim = [&](const char* key) { return std::max<std::int64_t>(a.at(key).integer(), 0); };
  if (c.kind == routine_kind::gemm) return dim("m") * dim("n") * dim("k") < (std::int64_t{1} << 24);
  return dim("m") * dim("n") < (std::int64_t{1} << 16);
}
constexpr int short_call_rounds = 4;  // times the rounds

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// The mean of the medians of a side's times run first and run second (the one there is, when only one).
double first_and_second(const std::vector<double> (&by_position)[2]) {
  if (by_position[0].empty() || by_position[1].empty()) return median(by_position[by_position[0].empty() ? 1 : 0]);
  return (median(by_position[0]) + median(by_position[1])) / 2;
}

struct class_totals {
  std::int64_t calls = 0;
  double scalapack = 0, redist = 0;  // sums over the rank's calls of the median per call
  std::set<std::string> shapes;
  std::set<std::string> paths, replayed_paths;
  bool agreed = true;
};

int replay(int argc, char** argv) {
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rounds = 5;
  bool noise_floor = false;
  bool cold = false;
  std::string json_path;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (redist_baseline::is_help_argument(arg)) throw redist_baseline::usage_requested{usage_text};
    if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
      if (rounds < 1) throw std::invalid_argument("--rounds needs a positive number");
    } else if (arg == "--noise-floor") {
      noise_floor = true;
    } else if (arg == "--cold") {
      cold = true;
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (!arg.empty() && arg[0] == '-') {
      throw std::invalid_argument("unknown option " + arg);
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) throw std::invalid_argument("no trace file given");

  // Every rank reads every file: the grids need every rank's position.
  std::vector<recorded_call> calls;
  std::size_t skipped = 0;
  std::set<int> ranks;
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!in) throw std::invalid_argument("cannot read " + file);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      if (line.empty()) continue;
      recorded_call c;
      try {
        const json v = json_parser(line).parse();
        c.rank = static_cast<int>(v.at("rank").integer());
        c.seq = v.at("seq").integer();
        c.entry = v.at("entry").str;
        c.path = v.at("path").str;
        c.args = v.at("args");
      } catch (const std::exception& e) {
        throw std::invalid_argument(file + ":" + std::to_string(number) + ": not a trace line (" + e.what() + ")");
      }
      ranks.insert(c.rank);
      if (c.path == "rejected" || !classify(c.entry, c.kind, c.type)) {
        ++skipped;  // an argument error, or a C++ plan: nothing to replay
        continue;
      }
      calls.push_back(std::move(c));
    }
  }
  if (ranks.empty() || *ranks.begin() != 0 || *ranks.rbegin() != size - 1 || static_cast<int>(ranks.size()) != size)
    throw std::invalid_argument("the traces are of " + std::to_string(ranks.size()) +
                                " ranks (their files together must hold ranks 0 to R-1, R = this run's " +
                                std::to_string(size) + " ranks)");

  // A copy's class names both grids, which a rank off one of them cannot see: the j-th copy over a context on one
  // rank is the j-th on every other rank of it (collective calls), so each takes the shapes any of them recorded.
  std::map<std::pair<grid_key, int>, std::vector<recorded_call*>> copies;  // (whole context, rank) -> calls
  for (recorded_call& c : calls)
    if (c.kind == routine_kind::gemr2d || c.kind == routine_kind::trmr2d) {
      const std::vector<int> g = integers(c.args.at("grid"));
      if (g.size() >= 5 && g[2] >= 0)
        copies[{grid_key{static_cast<int>(c.args.at("ictxt").integer()), g[0], g[1]}, c.rank}].push_back(&c);
    }
  std::map<std::pair<grid_key, std::size_t>, std::pair<std::string, std::string>> pair_shapes;
  // Likewise a rank off one grid may have recorded no descriptor of it (a DTYPE other than 1 or 2 keeps two
  // entries), while ScaLAPACK's REDIST reads its global entries on every rank: such a rank gets the global entries
  // another rank recorded, with CTXT -1 and LLD 1, as a program passes off a grid.
  std::map<std::pair<grid_key, std::size_t>, std::pair<json, json>> full_descriptors;
  const auto full = [](const json& d) { return d.items.size() >= 9; };
  for (auto& [key, list] : copies)
    for (std::size_t j = 0; j < list.size(); ++j) {
      auto& [ga, gb] = pair_shapes[{key.first, j}];
      const std::vector<int> a = integers(list[j]->args.at("grid_a")), b = integers(list[j]->args.at("grid_b"));
      if (a.size() >= 2 && a[0] > 0) ga = grid_text(a);
      if (b.size() >= 2 && b[0] > 0) gb = grid_text(b);
      auto& [da, db] = full_descriptors[{key.first, j}];
      if (full(list[j]->args.at("desca"))) da = list[j]->args.at("desca");
      if (full(list[j]->args.at("descb"))) db = list[j]->args.at("descb");
    }
  for (auto& [key, list] : copies)
    for (std::size_t j = 0; j < list.size(); ++j) {
      const auto& [ga, gb] = pair_shapes[{key.first, j}];
      list[j]->args.fields.emplace_back("grid_pair", json{json::text, 0, ga + "->" + gb, {}, {}});
      const auto& [da, db] = full_descriptors[{key.first, j}];
      for (const auto& [name, other] : {std::make_pair("desca", &da), std::make_pair("descb", &db)}) {
        json& mine = const_cast<json&>(list[j]->args.at(name));
        if (full(mine) || !full(*other)) continue;
        mine = *other;
        mine.items[1].num = -1;
        mine.items.back().num = 1;  // LLD
      }
    }

  // The recorded grids, made again on the same world ranks at the same positions, in one order on every rank.
  std::map<grid_key, replay_grid> grids;
  for (const recorded_call& c : calls)
    for (const auto& [ctxt, g] : grids_of(c)) {
      if (g.size() < 5 || g[2] < 0) continue;
      replay_grid& r = grids[{ctxt, g[0], g[1]}];
      r.rows = g[0], r.cols = g[1];
      const auto [it, added] = r.positions.emplace(c.rank, std::make_pair(g[2], g[3]));
      if (!added && it->second != std::make_pair(g[2], g[3]))
        throw std::invalid_argument("rank " + std::to_string(c.rank) + " is at two positions of context " +
                                    std::to_string(ctxt) +
                                    " in the traces (a context made again with another "
                                    "rank order: not supported)");
    }
  for (auto& [key, g] : grids)
    if (static_cast<int>(g.positions.size()) != g.rows * g.cols)
      throw std::invalid_argument("context " + std::to_string(std::get<0>(key)) + " (" + std::to_string(g.rows) + "x" +
                                  std::to_string(g.cols) + ") has " + std::to_string(g.positions.size()) +
                                  " ranks in the traces");
  // Makes every grid (again, where made before: BLACS frees the old context's communicators, and the drop-in's
  // state on them goes with them), in one order on every rank; returns this rank's old context -> new.
  const auto make_grids = [&] {
    std::map<int, int> renamed;
    for (auto& [key, g] : grids) {
      if (g.context >= 0) Cblacs_gridexit(g.context);
      std::vector<int> usermap(static_cast<std::size_t>(g.rows * g.cols), -1);
      for (const auto& [rank, pos] : g.positions)
        usermap[static_cast<std::size_t>(pos.first + pos.second * g.rows)] = rank;
      int context = 0;
      Cblacs_get(-1, 0, &context);
      Cblacs_gridmap(&context, usermap.data(), g.rows, g.rows, g.cols);
      const int made = g.positions.count(me) ? context : -1;
      if (g.context >= 0) renamed[g.context] = made;
      g.context = made;
    }
    return renamed;
  };
  make_grids();
  const auto grid_for = [&](int ctxt, const std::vector<int>& g) -> replay_grid* {
    if (g.size() < 5 || g[2] < 0) return nullptr;
    return &grids.at({ctxt, g[0], g[1]});
  };

  // This rank's calls, prepared: inputs random (seeded by rank and the first call of each descriptor), descriptors
  // on the new contexts, one buffer per distinct (type, descriptor) and role.
  std::vector<prepared_call> mine;
  using buffer_key = std::pair<char, std::vector<int>>;
  std::map<buffer_key, std::shared_ptr<const std::vector<unsigned char>>> inputs;
  std::map<buffer_key, std::shared_ptr<output_buffers>> outputs;
  for (const recorded_call& c : calls) {
    if (c.rank != me) continue;
    prepared_call p;
    p.call = &c;
    std::mt19937_64 g(static_cast<std::uint64_t>(c.seq) * 7919u + static_cast<std::uint64_t>(me));
    const json& a = c.args;
    const auto described = [&](const char* desc, const char* grid_field, replay_grid*& grid) {
      std::vector<int> d = integers(a.at(desc));
      const std::vector<int> recorded_grid = integers(a.at(grid_field));
      grid = d.size() >= 2 ? grid_for(d[1], recorded_grid) : nullptr;
      if (d.size() >= 2) d[1] = grid != nullptr ? grid->context : -1;
      d.resize(11, 0);  // as long as any routine reads (a recorded DTYPE other than 1 or 2 kept only two entries)
      return d;
    };
    replay_grid *ga = nullptr, *gb = nullptr, *gc = nullptr;
    const char elem = c.type;
    const auto input = [&](const std::vector<int>& desc, const replay_grid* grid) {
      std::shared_ptr<const std::vector<unsigned char>>& shared = inputs[{elem, desc}];
      if (shared == nullptr) {
        auto bytes = std::make_shared<std::vector<unsigned char>>();
        fill_typed(elem, *bytes, local_elements(desc, grid, me), g);
        shared = std::move(bytes);
      }
      return shared;
    };
    if (c.kind == routine_kind::gemm) {
      p.desca = described("desca", "grid", ga);
      p.descb = described("descb", "grid", gb);
      p.descc = described("descc", "grid", gc);
      p.a = input(p.desca, ga);
      p.b = input(p.descb, gb);
      p.k = a.at("k").integer();
      p.barrier_context = ga != nullptr ? ga->context : -1;
    } else if (c.kind == routine_kind::tran) {
      p.desca = described("desca", "grid", ga);
      p.descc = described("descc", "grid", gc);
      p.a = input(p.desca, ga);
      p.barrier_context = ga != nullptr ? ga->context : -1;
    } else {
      p.desca = described("desca", "grid_a", ga);
      p.descc = described("descb", "grid_b", gc);
      p.a = input(p.desca, ga);
      replay_grid* whole = grid_for(static_cast<int>(a.at("ictxt").integer()), integers(a.at("grid")));
      p.ictxt = whole != nullptr ? whole->context : -1;
      p.barrier_context = p.ictxt;
    }
    if (p.barrier_context < 0) continue;  // not on the call's grid: not this rank's call
    std::shared_ptr<output_buffers>& output = outputs[{elem, p.descc}];
    if (output == nullptr) {
      output = std::make_shared<output_buffers>();
      fill_typed(elem, output->initial, local_elements(p.descc, gc, me), g);
      output->timed = output->scalapack = output->redist = output->initial;
    }
    p.c = output;
    const bool copy = c.kind == routine_kind::gemr2d || c.kind == routine_kind::trmr2d;  // writes sub(B)
    const auto at = [&](const char* key) { return a.find(key) ? a.at(key).integer() : 0; };
    p.window = local_window(p.descc, gc, me, at(copy ? "ib" : "ic"), at(copy ? "jb" : "jc"), at("m"), at("n"),
                            element_bytes(elem));
    const output_window& w = p.window;
    if (w.cols > 0 &&
        (w.row0 + w.rows > w.lld ||
         static_cast<std::size_t>(((w.col0 + w.cols - 1) * w.lld + w.row0 + w.rows)) * w.element > p.c->initial.size()))
      p.window = output_window{0, static_cast<std::int64_t>(p.c->initial.size()), 0, 1, 0, 1};  // not inside: all
    for (const char* scalar : {"alpha", "beta"}) {
      const json* s = a.find(scalar);
      if (s == nullptr || s->kind != json::array) continue;
      double* out = std::strcmp(scalar, "alpha") == 0 ? p.alpha : p.beta;
      for (std::size_t i = 0; i < s->items.size() && i < 2; ++i) out[i] = s->items[i].num;
      if (elem == 'S') {  // the routine reads one element of its own type
        const float x = static_cast<float>(out[0]);
        std::memcpy(out, &x, sizeof x);
      } else if (elem == 'C') {
        const std::complex<float> x(static_cast<float>(out[0]), static_cast<float>(out[1]));
        std::memcpy(out, &x, sizeof x);
      }
    }
    mine.push_back(std::move(p));
  }
  for (prepared_call& p : mine) {
    std::tie(p.signature_class, p.shape) = class_of(*p.call);
    p.short_call = short_call(*p.call);
    p.scalapack = bind(p, false);
    p.redist = bind(p, !noise_floor);
  }

  // Interleaved rounds: each call through both paths, the order alternating; results compared after each pair.
  MPI_Barrier(MPI_COMM_WORLD);
  for (int round = 0; round < short_call_rounds * rounds; ++round) {
    if (cold && round > 0) {  // a fresh program run: the calls' contexts made again
      const std::map<int, int> renamed = make_grids();
      const auto rename = [&](int& context) {
        if (const auto it = renamed.find(context); it != renamed.end()) context = it->second;
      };
      for (prepared_call& p : mine) {
        for (std::vector<int>* d : {&p.desca, &p.descb, &p.descc})
          if (d->size() >= 2) rename((*d)[1]);
        rename(p.ictxt);
        rename(p.barrier_context);
      }
    }
    for (std::size_t i = 0; i < mine.size(); ++i) {
      prepared_call& p = mine[i];
      if (round >= rounds && !p.short_call) continue;
      const bool redist_first = (round + i) % 2 == 1;
      for (int side = 0; side < 2; ++side) {
        const bool through_redist = (side == 0) == redist_first;
        const double t = run(p, through_redist, round == 0);
        (through_redist ? p.seconds_redist : p.seconds_scalapack)[side].push_back(t);
      }
      const double d = difference_typed(p.call->type, p, round == 0);
      p.worst_difference = std::max(p.worst_difference, d);
      if (d > 1) p.agreed = false;
    }
  }
  // The path redist takes for each call now (learned classes decided), from one more run of its side, traced.
  const redist::trace::trace_mode mode_before = redist::trace::mode();
  redist::trace::set_mode(redist::trace::trace_mode::summary);
  for (prepared_call& p : mine) {
    if (noise_floor) {
      p.replayed_path = "ScaLAPACK (noise floor)";
      continue;
    }
    redist::trace::reset();
    run(p, true, true);
    for (const redist::trace::entry_totals& t : redist::trace::totals())
      if (t.calls > 0 && t.entry_point == p.call->entry) p.replayed_path = t.path;
  }
  redist::trace::reset();
  redist::trace::set_mode(mode_before);
  MPI_Barrier(MPI_COMM_WORLD);

  // Per class on this rank: the sum over its calls of each call's median over the rounds, taken apart for the
  // rounds a side ran first and second and averaged: the second call of a pair finds caches and peers warm (3-4 us
  // on a 10 us product at 2 ranks), and with an odd count of rounds one side of a call runs first more often.
  std::map<std::string, class_totals> classes;
  double total_scalapack = 0, total_redist = 0;
  for (const prepared_call& p : mine) {
    class_totals& t = classes[p.signature_class];
    ++t.calls;
    const double s = first_and_second(p.seconds_scalapack), r = first_and_second(p.seconds_redist);
    t.scalapack += s, t.redist += r;
    total_scalapack += s, total_redist += r;
    t.shapes.insert(p.shape);
    t.paths.insert(p.call->path);
    t.replayed_paths.insert(p.replayed_path.empty() ? "?" : p.replayed_path);
    t.agreed = t.agreed && p.agreed;
  }
  // Gathered on rank 0: a class's figures are the slowest rank's, its calls the most any rank made.
  std::string text;
  for (const auto& [name, t] : classes) {
    std::string shapes, paths, replayed;
    for (const std::string& s : t.shapes) shapes += (shapes.empty() ? "" : ",") + s;
    for (const std::string& s : t.paths) paths += (paths.empty() ? "" : ",") + s;
    for (const std::string& s : t.replayed_paths) replayed += (replayed.empty() ? "" : ",") + s;
    char numbers[128];
    std::snprintf(numbers, sizeof numbers, "\t%lld\t%.9g\t%.9g\t%d\t", static_cast<long long>(t.calls), t.scalapack,
                  t.redist, t.agreed ? 1 : 0);
    text += name + numbers + shapes + "\t" + paths + "\t" + replayed + "\n";
  }
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (me == 0) {
    int at = 0;
    for (int r = 0; r < size; ++r)
      offsets[static_cast<std::size_t>(r)] = at, at += lengths[static_cast<std::size_t>(r)];
    all.resize(static_cast<std::size_t>(at));
  }
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  double totals[2] = {total_scalapack, total_redist}, slowest[2] = {0, 0};
  MPI_Reduce(totals, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int agreed_here = 1;
  for (const auto& [name, t] : classes) agreed_here = agreed_here && t.agreed;
  int agreed_everywhere = 0;
  MPI_Allreduce(&agreed_here, &agreed_everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (me != 0) return agreed_everywhere ? 0 : 1;

  struct merged {
    std::int64_t calls = 0;
    double scalapack = 0, redist = 0;
    bool agreed = true;
    std::set<std::string> shapes, paths, replayed_paths;
  };
  std::map<std::string, merged> rows;
  std::istringstream lines(all);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
    if (f.size() < 8) continue;
    merged& m = rows[f[0]];
    m.calls = std::max<std::int64_t>(m.calls, std::stoll(f[1]));
    m.scalapack = std::max(m.scalapack, std::stod(f[2]));
    m.redist = std::max(m.redist, std::stod(f[3]));
    m.agreed = m.agreed && f[4] == "1";
    for (const auto& [field, set] :
         {std::make_pair(5, &m.shapes), std::make_pair(6, &m.paths), std::make_pair(7, &m.replayed_paths)}) {
      std::istringstream items(f[static_cast<std::size_t>(field)]);
      for (std::string x; std::getline(items, x, ',');) set->insert(x);
    }
  }
  std::printf(
      "redist-replay: %zu trace files, %d ranks, %zu calls replayed (%zu lines skipped: C++ plans, argument "
      "errors), %d rounds (short calls %d)%s\n",
      files.size(), size, calls.size(), skipped, rounds, short_call_rounds * rounds,
      cold ? ", each a program's one run (--cold)" : "");
  if (noise_floor) std::printf("noise floor: both columns ScaLAPACK (redist's column runs ScaLAPACK again)\n");
  std::printf("%-46s %6s %13s %13s %8s %6s  %s\n", "signature class", "calls", "ScaLAPACK ms",
              noise_floor ? "again ms" : "redist ms", "ratio", "agree", "paths: replayed (recorded)");
  redist_baseline::json_writer out;
  out.begin_object().field("program", "redist-replay").field("ranks", size).field("rounds", rounds);
  out.field("short_call_rounds", short_call_rounds * rounds).field("noise_floor", noise_floor).field("cold", cold);
  out.key("trace_files").begin_array();
  for (const std::string& f : files) out.value(f);
  out.end_array();
  out.key("classes").begin_array();
  double worst_ratio = 0;
  std::string worst_class;
  for (const auto& [name, m] : rows) {
    const double ratio = m.scalapack > 0 ? m.redist / m.scalapack : 0;
    std::string paths, replayed;
    for (const std::string& s : m.paths) paths += (paths.empty() ? "" : ",") + s;
    for (const std::string& s : m.replayed_paths) replayed += (replayed.empty() ? "" : ",") + s;
    std::printf("%-46s %6lld %13.4f %13.4f %7.3fx %6s  %s (%s)\n", name.c_str(), static_cast<long long>(m.calls),
                1e3 * m.scalapack / static_cast<double>(m.calls), 1e3 * m.redist / static_cast<double>(m.calls), ratio,
                m.agreed ? "yes" : "NO", replayed.c_str(), paths.c_str());
    if (ratio > worst_ratio) worst_ratio = ratio, worst_class = name;
    out.begin_object().field("class", name).field("calls", m.calls);
    out.field("scalapack_median_seconds_per_call", m.scalapack / static_cast<double>(m.calls));
    out.field("redist_median_seconds_per_call", m.redist / static_cast<double>(m.calls));
    out.field("scalapack_seconds", m.scalapack).field("redist_seconds", m.redist).field("ratio", ratio);
    out.field("results_agree", m.agreed);
    out.array_field("shapes", std::vector<std::string>(m.shapes.begin(), m.shapes.end()));
    out.array_field("recorded_paths", std::vector<std::string>(m.paths.begin(), m.paths.end()));
    out.array_field("replayed_paths", std::vector<std::string>(m.replayed_paths.begin(), m.replayed_paths.end()));
    out.end_object();
  }
  out.end_array();
  const double total_ratio = slowest[0] > 0 ? slowest[1] / slowest[0] : 0;
  out.key("total").begin_object().field("scalapack_seconds", slowest[0]).field("redist_seconds", slowest[1]);
  out.field("ratio", total_ratio).end_object();
  out.field("results_agree", agreed_everywhere != 0);
  out.end_object();
  std::printf("%-46s %6s %13.4f %13.4f %7.3fx %6s\n", "whole trace (slowest rank, ms)", "", 1e3 * slowest[0],
              1e3 * slowest[1], total_ratio, agreed_everywhere ? "yes" : "NO");
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << out.text() << "\n";
    if (!f) throw std::runtime_error("cannot write " + json_path);
  }
  std::printf("SUMMARY redist-replay: %zu classes, whole trace %s %.3fx, worst class %.3fx (%s), results %s\n",
              rows.size(), noise_floor ? "ScaLAPACK/ScaLAPACK (noise floor)" : "redist/ScaLAPACK", total_ratio,
              worst_ratio, worst_class.c_str(), agreed_everywhere ? "agree" : "DIFFER");
  return agreed_everywhere ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = replay(argc, argv);
  } catch (const redist_baseline::usage_requested& usage) {
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) redist_baseline::print_usage(usage);
  } catch (const std::invalid_argument& e) {
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) std::fprintf(stderr, "redist-replay: %s\n%s", e.what(), usage_text);
    status = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "redist-replay: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
