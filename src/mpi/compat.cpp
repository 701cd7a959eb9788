// SPDX-License-Identifier: BSD-3-Clause
// MPI-4 calls with their MPI-3.1 equivalents (see compat.hpp), and the byte mirror of a datatype.
#include "compat.hpp"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace redist::mpi {

#ifdef REDIST_HAVE_MPI_LARGE_COUNT
bool has_large_counts() noexcept { return true; }
#else
bool has_large_counts() noexcept { return false; }
#endif

namespace {

std::int64_t read_int_limit() noexcept {
  const char* text = std::getenv("REDIST_MPI_INT_LIMIT");
  if (text == nullptr || *text == '\0') return INT_MAX;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < 1 || value > INT_MAX) {
    std::fprintf(stderr, "redist: ignoring REDIST_MPI_INT_LIMIT=%s (expected 1 to %d)\n", text, INT_MAX);
    return INT_MAX;
  }
  return value;
}

// A count that an int argument takes (the test limit included), and a displacement likewise. (Helpers of
// the MPI-3.1 equivalents: unused where the MPI has the large-count calls.)
[[maybe_unused]] bool fits(std::int64_t count) { return count >= 0 && count <= int_limit(); }
[[maybe_unused]] bool fits_signed(std::int64_t value) { return value >= -int_limit() && value <= int_limit(); }

// Elements per piece when a count is cut up: a power of two within the limit, at most 2^30.
[[maybe_unused]] std::int64_t chunk_elements() {
  const std::int64_t cap = std::min<std::int64_t>(int_limit(), std::int64_t{1} << 30);
  std::int64_t chunk = 1;
  while (chunk * 2 <= cap) chunk *= 2;
  return chunk;
}

[[maybe_unused]] std::int64_t times(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw overflow_error(std::string(what) + ": byte offset overflows 64 bits");
  return r;
}

[[maybe_unused]] int to_int(std::int64_t v, const char* what) {
  if (v < INT_MIN || v > INT_MAX)
    throw overflow_error(std::string(what) + ": " + std::to_string(v) +
                         " exceeds int and this MPI lacks the MPI-4 "
                         "large-count calls");
  return static_cast<int>(v);
}

[[maybe_unused]] std::vector<int> to_ints(const std::int64_t* values, std::size_t n, const char* what) {
  std::vector<int> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = to_int(values[i], what);
  return out;
}

// The values as an array of T (MPI_Count, MPI_Aint): no copy where T is std::int64_t.
template <class T>
[[maybe_unused]] const T* as(const std::int64_t* values, std::size_t n, std::vector<T>& storage) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    (void)n;
    (void)storage;
    return values;
  } else {
    storage.assign(values, values + n);
    return storage.data();
  }
}

datatype_handle committed(MPI_Datatype t) {
  MPI_Datatype c = t;
  const int code = MPI_Type_commit(&c);
  if (code != MPI_SUCCESS) MPI_Type_free(&t);
  check_local(code, "MPI_Type_commit");
  return datatype_handle(c);
}

// Blocks (length in elements, byte displacement) of `element` as one committed type: an hindexed type, or
// several joined by a struct at displacement 0 when there are more blocks than an int counts.
[[maybe_unused]] datatype_handle from_blocks(const std::vector<int>& lengths,
                                             const std::vector<MPI_Aint>& displacements, MPI_Datatype element) {
  const auto n = static_cast<std::int64_t>(lengths.size());
  MPI_Datatype t = MPI_DATATYPE_NULL;
  if (fits(n)) {
    REDIST_MPI_CHECK_LOCAL(
        MPI_Type_create_hindexed(static_cast<int>(n), lengths.data(), displacements.data(), element, &t));
    return committed(t);
  }
  const std::int64_t chunk = chunk_elements();
  std::vector<datatype_handle> parts;
  std::vector<MPI_Datatype> types;
  for (std::int64_t first = 0; first < n; first += chunk) {
    const int count = static_cast<int>(std::min(chunk, n - first));
    REDIST_MPI_CHECK_LOCAL(
        MPI_Type_create_hindexed(count, lengths.data() + first, displacements.data() + first, element, &t));
    parts.emplace_back(t);
    types.push_back(t);
  }
  const int groups = to_int(static_cast<std::int64_t>(types.size()), "hindexed datatype groups");
  const std::vector<int> ones(types.size(), 1);
  const std::vector<MPI_Aint> zeros(types.size(), 0);
  REDIST_MPI_CHECK_LOCAL(MPI_Type_create_struct(groups, ones.data(), zeros.data(), types.data(), &t));
  return committed(t);
}

}  // namespace

std::int64_t int_limit() noexcept {
  static const std::int64_t limit = read_int_limit();
  return limit;
}

bool on_any_rank(MPI_Comm comm, bool mine) {
  int value = mine ? 1 : 0, any = 0;
  REDIST_MPI_CHECK(allreduce_yielding(&value, &any, 1, MPI_INT, MPI_LOR, comm));
  return any != 0;
}

// ---- datatypes ----

std::int64_t type_size(MPI_Datatype t) {
  MPI_Count size = 0;
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  REDIST_MPI_CHECK_LOCAL(MPI_Type_size_c(t, &size));
#else
  REDIST_MPI_CHECK_LOCAL(MPI_Type_size_x(t, &size));  // MPI-3.0
#endif
  if (size == MPI_UNDEFINED) throw overflow_error("the datatype's size exceeds MPI_Count");
  return static_cast<std::int64_t>(size);
}

type_bounds type_extent(MPI_Datatype t) {
  MPI_Count lb = 0, extent = 0;
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  REDIST_MPI_CHECK_LOCAL(MPI_Type_get_extent_c(t, &lb, &extent));
#else
  REDIST_MPI_CHECK_LOCAL(MPI_Type_get_extent_x(t, &lb, &extent));
#endif
  return {static_cast<std::int64_t>(lb), static_cast<std::int64_t>(extent)};
}

type_bounds type_true_extent(MPI_Datatype t) {
  MPI_Count lb = 0, extent = 0;
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  REDIST_MPI_CHECK_LOCAL(MPI_Type_get_true_extent_c(t, &lb, &extent));
#else
  REDIST_MPI_CHECK_LOCAL(MPI_Type_get_true_extent_x(t, &lb, &extent));
#endif
  return {static_cast<std::int64_t>(lb), static_cast<std::int64_t>(extent)};
}

datatype_handle typed_block(MPI_Datatype t, std::int64_t count, std::int64_t displacement) {
  if (count < 0) throw invalid_count("a datatype of " + std::to_string(count) + " elements");
  MPI_Datatype r = MPI_DATATYPE_NULL;
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  const MPI_Count at = displacement;
  REDIST_MPI_CHECK_LOCAL(MPI_Type_create_hindexed_block_c(1, count, &at, t, &r));
  return committed(r);
#else
  const MPI_Aint at = displacement;
  if (fits(count)) {
    REDIST_MPI_CHECK_LOCAL(MPI_Type_create_hindexed_block(1, static_cast<int>(count), &at, t, &r));
    return committed(r);
  }
  // Whole chunks of elements, then the rest.
  const std::int64_t chunk = chunk_elements(), chunks = count / chunk, rest = count % chunk;
  MPI_Datatype piece = MPI_DATATYPE_NULL;
  REDIST_MPI_CHECK_LOCAL(MPI_Type_contiguous(static_cast<int>(chunk), t, &piece));
  datatype_handle piece_owner(piece);
  const int lengths[2] = {to_int(chunks, "chunks of a large message"), static_cast<int>(rest)};
  const MPI_Aint displacements[2] = {
      at, at + times(times(chunks, chunk, "large message"), type_extent(t).extent, "large message")};
  const MPI_Datatype types[2] = {piece, t};
  REDIST_MPI_CHECK_LOCAL(MPI_Type_create_struct(rest > 0 ? 2 : 1, lengths, displacements, types, &r));
  return committed(r);
#endif
}

datatype_handle hindexed(const std::vector<std::int64_t>& lengths, const std::vector<std::int64_t>& displacements,
                         MPI_Datatype element) {
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  MPI_Datatype t = MPI_DATATYPE_NULL;
  std::vector<MPI_Count> l, d;
  REDIST_MPI_CHECK_LOCAL(MPI_Type_create_hindexed_c(static_cast<MPI_Count>(lengths.size()),
                                                    as(lengths.data(), lengths.size(), l),
                                                    as(displacements.data(), displacements.size(), d), element, &t));
  return committed(t);
#else
  // Blocks longer than the limit are cut into chunks.
  const std::int64_t chunk = chunk_elements(), extent = type_extent(element).extent;
  std::vector<int> l;
  std::vector<MPI_Aint> d;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (fits(lengths[i])) {
      l.push_back(static_cast<int>(lengths[i]));
      d.push_back(static_cast<MPI_Aint>(displacements[i]));
      continue;
    }
    for (std::int64_t done = 0; done < lengths[i]; done += chunk) {
      l.push_back(static_cast<int>(std::min(chunk, lengths[i] - done)));
      d.push_back(static_cast<MPI_Aint>(displacements[i] + times(done, extent, "hindexed block")));
    }
  }
  return from_blocks(l, d, element);
#endif
}

datatype_handle hindexed_single(const std::vector<std::int64_t>& displacements, MPI_Datatype element) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  std::vector<MPI_Count> d;
  REDIST_MPI_CHECK_LOCAL(MPI_Type_create_hindexed_block_c(
      static_cast<MPI_Count>(displacements.size()), 1, as(displacements.data(), displacements.size(), d), element, &t));
  return committed(t);
#else
  const std::vector<MPI_Aint> d(displacements.begin(), displacements.end());
  if (fits(static_cast<std::int64_t>(d.size()))) {
    REDIST_MPI_CHECK_LOCAL(MPI_Type_create_hindexed_block(static_cast<int>(d.size()), 1, d.data(), element, &t));
    return committed(t);
  }
  return from_blocks(std::vector<int>(d.size(), 1), d, element);
#endif
}

// ---- byte mirror ----

namespace {

int combiner_of(MPI_Datatype t) {
  int combiner = MPI_COMBINER_NAMED;
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  MPI_Count ni = 0, na = 0, nc = 0, nd = 0;
  REDIST_MPI_CHECK_LOCAL(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &combiner));
#else
  int ni = 0, na = 0, nd = 0;
  REDIST_MPI_CHECK_LOCAL(MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner));
#endif
  return combiner;
}

// How a derived datatype was made: its constructor and arguments (MPI_Type_get_contents). Large counts are
// the arguments of an MPI-4 `_c` constructor.
struct contents {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPI_Aint> addresses;
  std::vector<MPI_Count> counts;
  std::vector<datatype_handle> owned;  // the returned datatypes that are not predefined
  std::vector<MPI_Datatype> types;
};

contents read_contents(MPI_Datatype t) {
  contents c;
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  MPI_Count ni = 0, na = 0, nc = 0, nd = 0;
  REDIST_MPI_CHECK_LOCAL(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &c.combiner));
  if (c.combiner == MPI_COMBINER_NAMED) return c;
  c.ints.resize(static_cast<std::size_t>(ni));
  c.addresses.resize(static_cast<std::size_t>(na));
  c.counts.resize(static_cast<std::size_t>(nc));
  c.types.resize(static_cast<std::size_t>(nd));
  REDIST_MPI_CHECK_LOCAL(
      MPI_Type_get_contents_c(t, ni, na, nc, nd, c.ints.data(), c.addresses.data(), c.counts.data(), c.types.data()));
#else
  int ni = 0, na = 0, nd = 0;
  REDIST_MPI_CHECK_LOCAL(MPI_Type_get_envelope(t, &ni, &na, &nd, &c.combiner));
  if (c.combiner == MPI_COMBINER_NAMED) return c;
  c.ints.resize(static_cast<std::size_t>(ni));
  c.addresses.resize(static_cast<std::size_t>(na));
  c.types.resize(static_cast<std::size_t>(nd));
  REDIST_MPI_CHECK_LOCAL(MPI_Type_get_contents(t, ni, na, nd, c.ints.data(), c.addresses.data(), c.types.data()));
#endif
  for (MPI_Datatype d : c.types) {  // predefined ones (F90 types included) are not to be freed
    const int k = combiner_of(d);
    if (k != MPI_COMBINER_NAMED && k != MPI_COMBINER_F90_REAL && k != MPI_COMBINER_F90_COMPLEX &&
        k != MPI_COMBINER_F90_INTEGER)
      c.owned.emplace_back(d);
  }
  return c;
}

// t's layout with byte elements, lower bound and extent set to t's (a struct's alignment padding included).
MPI_Datatype resized_like(MPI_Datatype mirror, MPI_Datatype t) {
  datatype_handle owner(mirror);
  const type_bounds b = type_extent(t);
  MPI_Datatype r = MPI_DATATYPE_NULL;
  REDIST_MPI_CHECK_LOCAL(
      MPI_Type_create_resized(mirror, static_cast<MPI_Aint>(b.lb), static_cast<MPI_Aint>(b.extent), &r));
  return r;
}

// A basic datatype (or one MPI builds as such): its bytes, contiguous unless it is one of MPI's pair types
// (a value and an int, as the C structs the standard defines them by).
MPI_Datatype leaf_mirror(MPI_Datatype t) {
  const std::int64_t size = type_size(t);
  MPI_Datatype pair_value = MPI_DATATYPE_NULL;
  MPI_Aint int_offset = 0;
  if (t == MPI_FLOAT_INT) {
    struct s {
      float v;
      int i;
    };
    pair_value = MPI_FLOAT, int_offset = offsetof(s, i);
  } else if (t == MPI_DOUBLE_INT) {
    struct s {
      double v;
      int i;
    };
    pair_value = MPI_DOUBLE, int_offset = offsetof(s, i);
  } else if (t == MPI_LONG_INT) {
    struct s {
      long v;
      int i;
    };
    pair_value = MPI_LONG, int_offset = offsetof(s, i);
  } else if (t == MPI_SHORT_INT) {
    struct s {
      short v;
      int i;
    };
    pair_value = MPI_SHORT, int_offset = offsetof(s, i);
  } else if (t == MPI_LONG_DOUBLE_INT) {
    struct s {
      long double v;
      int i;
    };
    pair_value = MPI_LONG_DOUBLE, int_offset = offsetof(s, i);
  }
  MPI_Datatype m = MPI_DATATYPE_NULL;
  if (pair_value != MPI_DATATYPE_NULL) {
    const std::int64_t value_size = type_size(pair_value);
    if (value_size + static_cast<std::int64_t>(sizeof(int)) != size || value_size > int_offset)
      throw invalid_datatype("byte mirror: a pair datatype of " + std::to_string(size) +
                             " bytes that is not its C "
                             "struct");
    const int lengths[2] = {static_cast<int>(value_size), static_cast<int>(sizeof(int))};
    const MPI_Aint displacements[2] = {0, int_offset};
    REDIST_MPI_CHECK_LOCAL(MPI_Type_create_hindexed(2, lengths, displacements, MPI_BYTE, &m));
  } else {
    // Any other basic type is all data: its size is its true extent.
    const type_bounds tb = type_true_extent(t);
    if (tb.extent != size || size > INT_MAX)
      throw invalid_datatype("byte mirror: a basic datatype of " + std::to_string(size) +
                             " bytes over a true extent of " + std::to_string(tb.extent) + " bytes");
    const int length = static_cast<int>(size);
    const MPI_Aint at = static_cast<MPI_Aint>(tb.lb);
    REDIST_MPI_CHECK_LOCAL(MPI_Type_create_hindexed(1, &length, &at, MPI_BYTE, &m));
  }
  return resized_like(m, t);
}

MPI_Datatype mirror_of(MPI_Datatype t);

// The constructor of c again, over the children's mirrors.
MPI_Datatype rebuild(const contents& c) {
  std::vector<datatype_handle> children;
  std::vector<MPI_Datatype> mirrors;
  for (MPI_Datatype d : c.types) {
    mirrors.push_back(mirror_of(d));
    children.emplace_back(mirrors.back());
  }
  const MPI_Datatype m = mirrors.empty() ? MPI_DATATYPE_NULL : mirrors[0];
  const int* i = c.ints.data();
  const MPI_Aint* a = c.addresses.data();
  MPI_Datatype r = MPI_DATATYPE_NULL;
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  if (!c.counts.empty()) {  // made by a `_c` constructor: its count arguments are in c.counts, in order
    const MPI_Count* n = c.counts.data();
    switch (c.combiner) {
      case MPI_COMBINER_CONTIGUOUS:
        REDIST_MPI_CHECK_LOCAL(MPI_Type_contiguous_c(n[0], m, &r));
        return r;
      case MPI_COMBINER_VECTOR:
        REDIST_MPI_CHECK_LOCAL(MPI_Type_vector_c(n[0], n[1], n[2], m, &r));
        return r;
      case MPI_COMBINER_HVECTOR:
        REDIST_MPI_CHECK_LOCAL(MPI_Type_create_hvector_c(n[0], n[1], n[2], m, &r));
        return r;
      case MPI_COMBINER_INDEXED:
        REDIST_MPI_CHECK_LOCAL(MPI_Type_indexed_c(n[0], n + 1, n + 1 + n[0], m, &r));
        return r;
      case MPI_COMBINER_HINDEXED:
        REDIST_MPI_CHECK_LOCAL(MPI_Type_create_hindexed_c(n[0], n + 1, n + 1 + n[0], m, &r));
        return r;
      case MPI_COMBINER_INDEXED_BLOCK:
        REDIST_MPI_CHECK_LOCAL(MPI_Type_create_indexed_block_c(n[0], n[1], n + 2, m, &r));
        return r;
      case MPI_COMBINER_HINDEXED_BLOCK:
        REDIST_MPI_CHECK_LOCAL(MPI_Type_create_hindexed_block_c(n[0], n[1], n + 2, m, &r));
        return r;
      case MPI_COMBINER_STRUCT:
        REDIST_MPI_CHECK_LOCAL(MPI_Type_create_struct_c(n[0], n + 1, n + 1 + n[0], mirrors.data(), &r));
        return r;
      case MPI_COMBINER_SUBARRAY: {
        const MPI_Count dims = i[0];
        REDIST_MPI_CHECK_LOCAL(MPI_Type_create_subarray_c(i[0], n, n + dims, n + 2 * dims, i[1], m, &r));
        return r;
      }
      case MPI_COMBINER_DARRAY: {
        const int dims = i[2];
        REDIST_MPI_CHECK_LOCAL(MPI_Type_create_darray_c(i[0], i[1], dims, n, i + 3, i + 3 + dims, i + 3 + 2 * dims,
                                                        i[3 + 3 * dims], m, &r));
        return r;
      }
      case MPI_COMBINER_RESIZED:
        REDIST_MPI_CHECK_LOCAL(MPI_Type_create_resized_c(m, n[0], n[1], &r));
        return r;
      default:
        break;
    }
    throw invalid_datatype("byte mirror: a large-count datatype of combiner " + std::to_string(c.combiner) +
                           " cannot be taken apart");
  }
#endif
  switch (c.combiner) {
    case MPI_COMBINER_DUP:
      REDIST_MPI_CHECK_LOCAL(MPI_Type_dup(m, &r));
      return r;
    case MPI_COMBINER_CONTIGUOUS:
      REDIST_MPI_CHECK_LOCAL(MPI_Type_contiguous(i[0], m, &r));
      return r;
    case MPI_COMBINER_VECTOR:
      REDIST_MPI_CHECK_LOCAL(MPI_Type_vector(i[0], i[1], i[2], m, &r));
      return r;
    case MPI_COMBINER_HVECTOR:
      REDIST_MPI_CHECK_LOCAL(MPI_Type_create_hvector(i[0], i[1], a[0], m, &r));
      return r;
    case MPI_COMBINER_INDEXED:
      REDIST_MPI_CHECK_LOCAL(MPI_Type_indexed(i[0], i + 1, i + 1 + i[0], m, &r));
      return r;
    case MPI_COMBINER_HINDEXED:
      REDIST_MPI_CHECK_LOCAL(MPI_Type_create_hindexed(i[0], i + 1, a, m, &r));
      return r;
    case MPI_COMBINER_INDEXED_BLOCK:
      REDIST_MPI_CHECK_LOCAL(MPI_Type_create_indexed_block(i[0], i[1], i + 2, m, &r));
      return r;
    case MPI_COMBINER_HINDEXED_BLOCK:
      REDIST_MPI_CHECK_LOCAL(MPI_Type_create_hindexed_block(i[0], i[1], a, m, &r));
      return r;
    case MPI_COMBINER_STRUCT:
      REDIST_MPI_CHECK_LOCAL(MPI_Type_create_struct(i[0], i + 1, a, mirrors.data(), &r));
      return r;
    case MPI_COMBINER_SUBARRAY: {
      const int dims = i[0];
      REDIST_MPI_CHECK_LOCAL(
          MPI_Type_create_subarray(dims, i + 1, i + 1 + dims, i + 1 + 2 * dims, i[1 + 3 * dims], m, &r));
      return r;
    }
    case MPI_COMBINER_DARRAY: {
      const int dims = i[2];
      // A copy: SimGrid's SMPI declares the four arrays without const.
      std::vector<int> v(i, i + 4 + 4 * dims);
      REDIST_MPI_CHECK_LOCAL(MPI_Type_create_darray(v[0], v[1], dims, &v[3], &v[3 + dims], &v[3 + 2 * dims],
                                                    &v[3 + 3 * dims], v[3 + 4 * dims], m, &r));
      return r;
    }
    case MPI_COMBINER_RESIZED:
      REDIST_MPI_CHECK_LOCAL(MPI_Type_create_resized(m, a[0], a[1], &r));
      return r;
    default:
      break;
  }
  throw invalid_datatype("byte mirror: a datatype of combiner " + std::to_string(c.combiner) +
                         " (not an MPI-3.1 constructor redist takes apart)");
}

MPI_Datatype mirror_of(MPI_Datatype t) {
  const contents c = read_contents(t);
  switch (c.combiner) {
    case MPI_COMBINER_NAMED:
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER:
      return leaf_mirror(t);
    default:
      return resized_like(rebuild(c), t);
  }
}

}  // namespace

datatype_handle byte_mirror(MPI_Datatype t) {
  datatype_handle m = committed(mirror_of(t));
  // The same size, bounds and data bounds, or something was taken apart wrongly.
  const type_bounds e = type_extent(t), me = type_extent(m.get());
  const type_bounds te = type_true_extent(t), mte = type_true_extent(m.get());
  if (type_size(m.get()) != type_size(t) || e.lb != me.lb || e.extent != me.extent || te.lb != mte.lb ||
      te.extent != mte.extent)
    throw invalid_datatype("byte mirror: the rebuilt datatype differs from the original in size or bounds");
  return m;
}

// ---- point to point ----

MPI_Request send_init(const void* buf, std::int64_t count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                      std::vector<datatype_handle>& keep) {
  MPI_Request r = MPI_REQUEST_NULL;
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  (void)keep;
  REDIST_MPI_CHECK(MPI_Send_init_c(buf, count, type, dest, tag, comm, &r));
#else
  if (fits(count)) {
    REDIST_MPI_CHECK(MPI_Send_init(buf, static_cast<int>(count), type, dest, tag, comm, &r));
  } else {
    keep.push_back(typed_block(type, count, 0));
    REDIST_MPI_CHECK(MPI_Send_init(buf, 1, keep.back().get(), dest, tag, comm, &r));
  }
#endif
  return r;
}

MPI_Request recv_init(void* buf, std::int64_t count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                      std::vector<datatype_handle>& keep) {
  MPI_Request r = MPI_REQUEST_NULL;
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  (void)keep;
  REDIST_MPI_CHECK(MPI_Recv_init_c(buf, count, type, source, tag, comm, &r));
#else
  if (fits(count)) {
    REDIST_MPI_CHECK(MPI_Recv_init(buf, static_cast<int>(count), type, source, tag, comm, &r));
  } else {
    keep.push_back(typed_block(type, count, 0));
    REDIST_MPI_CHECK(MPI_Recv_init(buf, 1, keep.back().get(), source, tag, comm, &r));
  }
#endif
  return r;
}

bool is_committed(MPI_Datatype t, MPI_Comm comm) {
  int integers = 0, addresses = 0, datatypes = 0, combiner = 0;
  REDIST_MPI_CHECK_LOCAL(MPI_Type_get_envelope(t, &integers, &addresses, &datatypes, &combiner));
  if (combiner == MPI_COMBINER_NAMED) return true;
  const char in = 0;
  char out = 0;
  int position = 0;
  return MPI_Pack(&in, 0, t, &out, 1, &position, comm) == MPI_SUCCESS;
}

void local_copy(const void* from, std::int64_t from_count, MPI_Datatype from_type, void* to, std::int64_t to_count,
                MPI_Datatype to_type, MPI_Comm comm) {
  const int me = rank(comm);
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  REDIST_MPI_CHECK(
      MPI_Sendrecv_c(from, from_count, from_type, me, 0, to, to_count, to_type, me, 0, comm, MPI_STATUS_IGNORE));
#else
  datatype_handle from_block, to_block;
  if (!fits(from_count)) {
    from_block = typed_block(from_type, from_count, 0);
    from_type = from_block.get();
    from_count = 1;
  }
  if (!fits(to_count)) {
    to_block = typed_block(to_type, to_count, 0);
    to_type = to_block.get();
    to_count = 1;
  }
  REDIST_MPI_CHECK(MPI_Sendrecv(from, static_cast<int>(from_count), from_type, me, 0, to, static_cast<int>(to_count),
                                to_type, me, 0, comm, MPI_STATUS_IGNORE));
#endif
}

// ---- collectives and one-sided ----

void alltoallv(const void* sendbuf, const std::int64_t* sendcounts, const std::int64_t* sdispls, MPI_Datatype sendtype,
               void* recvbuf, const std::int64_t* recvcounts, const std::int64_t* rdispls, MPI_Datatype recvtype,
               MPI_Comm comm, bool wide) {
  const auto n = static_cast<std::size_t>(size(comm));
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  (void)wide;
  std::vector<MPI_Count> sc, rc;
  std::vector<MPI_Aint> sd, rd;
  REDIST_MPI_CHECK(MPI_Alltoallv_c(sendbuf, as(sendcounts, n, sc), as(sdispls, n, sd), sendtype, recvbuf,
                                   as(recvcounts, n, rc), as(rdispls, n, rd), recvtype, comm));
#else
  if (!wide) {
    const std::vector<int> sc = to_ints(sendcounts, n, "alltoallv count"),
                           sd = to_ints(sdispls, n, "alltoallv displacement");
    const std::vector<int> rc = to_ints(recvcounts, n, "alltoallv count"),
                           rd = to_ints(rdispls, n, "alltoallv displacement");
    REDIST_MPI_CHECK(
        MPI_Alltoallv(sendbuf, sc.data(), sd.data(), sendtype, recvbuf, rc.data(), rd.data(), recvtype, comm));
    return;
  }
  // MPI_Alltoallw: byte displacements, and a datatype per peer where a count or displacement exceeds int.
  std::vector<datatype_handle> owned;
  const auto side = [&](const std::int64_t* counts, const std::int64_t* displs, MPI_Datatype type, std::vector<int>& c,
                        std::vector<int>& d, std::vector<MPI_Datatype>& t) {
    const std::int64_t extent = type_extent(type).extent;
    c.assign(n, 0);
    d.assign(n, 0);
    t.assign(n, type);
    for (std::size_t r = 0; r < n; ++r) {
      if (counts[r] == 0) continue;
      const std::int64_t bytes = times(displs[r], extent, "alltoallv displacement");
      if (fits(counts[r]) && fits_signed(bytes)) {
        c[r] = static_cast<int>(counts[r]);
        d[r] = static_cast<int>(bytes);
      } else {
        owned.push_back(typed_block(type, counts[r], bytes));
        c[r] = 1;
        t[r] = owned.back().get();
      }
    }
  };
  std::vector<int> sc, sd, rc, rd;
  std::vector<MPI_Datatype> st, rt;
  side(sendcounts, sdispls, sendtype, sc, sd, st);
  side(recvcounts, rdispls, recvtype, rc, rd, rt);
  REDIST_MPI_CHECK(
      MPI_Alltoallw(sendbuf, sc.data(), sd.data(), st.data(), recvbuf, rc.data(), rd.data(), rt.data(), comm));
#endif
}

allgatherv_args::allgatherv_args(std::int64_t sendcount, const std::vector<std::int64_t>& recvcounts,
                                 const std::vector<std::int64_t>& displacements, MPI_Datatype type)
    : type_(type), sendcount_(sendcount) {
  const std::size_t n = recvcounts.size();
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  (void)n;
  form_ = form::large;
  large_counts_.assign(recvcounts.begin(), recvcounts.end());
  large_displs_.assign(displacements.begin(), displacements.end());
#else
  bool all_fit = fits(sendcount);
  for (std::size_t r = 0; r < n; ++r) all_fit = all_fit && fits(recvcounts[r]) && fits_signed(displacements[r]);
  if (all_fit) {
    form_ = form::ints;
    recv_counts_ = to_ints(recvcounts.data(), n, "allgatherv count");
    displs_ = to_ints(displacements.data(), n, "allgatherv displacement");
    return;
  }
  // MPI_Ialltoallw: this rank's piece to every peer, each peer's piece into its place.
  form_ = form::per_peer;
  const std::int64_t extent = type_extent(type).extent;
  owned_.push_back(typed_block(type, sendcount, 0));
  const MPI_Datatype piece = owned_.back().get();
  send_counts_.assign(n, sendcount > 0 ? 1 : 0);
  send_types_.assign(n, piece);
  recv_counts_.assign(n, 0);
  recv_types_.assign(n, type);
  displs_.assign(n, 0);
  for (std::size_t r = 0; r < n; ++r) {
    if (recvcounts[r] == 0) continue;
    owned_.push_back(typed_block(type, recvcounts[r], times(displacements[r], extent, "allgatherv displacement")));
    recv_counts_[r] = 1;
    recv_types_[r] = owned_.back().get();
  }
#endif
}

void allgatherv_args::start(const void* sendbuf, void* recvbuf, MPI_Comm comm, MPI_Request* request) const {
  switch (form_) {
    case form::large:
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
      REDIST_MPI_CHECK(MPI_Iallgatherv_c(sendbuf, sendcount_, type_, recvbuf, large_counts_.data(),
                                         large_displs_.data(), type_, comm, request));
#endif
      return;
    case form::ints:
      REDIST_MPI_CHECK(MPI_Iallgatherv(sendbuf, static_cast<int>(sendcount_), type_, recvbuf, recv_counts_.data(),
                                       displs_.data(), type_, comm, request));
      return;
    case form::per_peer:
      REDIST_MPI_CHECK(MPI_Ialltoallw(sendbuf, send_counts_.data(), displs_.data(), send_types_.data(), recvbuf,
                                      recv_counts_.data(), displs_.data(), recv_types_.data(), comm, request));
      return;
  }
}

void reduce_scatter(const void* sendbuf, void* recvbuf, const std::int64_t* recvcounts, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm) {
  const auto n = static_cast<std::size_t>(size(comm));
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  std::vector<MPI_Count> counts;
  MPI_Request request = MPI_REQUEST_NULL;
  REDIST_MPI_CHECK(MPI_Ireduce_scatter_c(sendbuf, recvbuf, as(recvcounts, n, counts), type, op, comm, &request));
  REDIST_MPI_CHECK(wait_collective_yielding(request, comm));
#else
  std::int64_t total = 0;
  bool all_fit = true;
  for (std::size_t r = 0; r < n; ++r) {
    all_fit = all_fit && fits(recvcounts[r]);
    total += recvcounts[r];
  }
  if (all_fit && fits(total)) {  // the total too: implementations add the counts up in an int
    const std::vector<int> counts = to_ints(recvcounts, n, "reduce_scatter count");
    MPI_Request request = MPI_REQUEST_NULL;
    REDIST_MPI_CHECK(MPI_Ireduce_scatter(sendbuf, recvbuf, counts.data(), type, op, comm, &request));
    REDIST_MPI_CHECK(wait_collective_yielding(request, comm));
    return;
  }
  // Every rank's block reduced to it, in pieces an int counts (the same calls in the same order everywhere).
  const int me = rank(comm);
  const std::int64_t extent = type_extent(type).extent, chunk = chunk_elements();
  std::int64_t offset = 0;
  for (std::size_t r = 0; r < n; ++r) {
    for (std::int64_t done = 0; done < recvcounts[r]; done += chunk) {
      const int count = static_cast<int>(std::min(chunk, recvcounts[r] - done));
      const char* from = static_cast<const char*>(sendbuf) + times(offset + done, extent, "reduce_scatter");
      char* into =
          static_cast<int>(r) == me ? static_cast<char*>(recvbuf) + times(done, extent, "reduce_scatter") : nullptr;
      MPI_Request request = MPI_REQUEST_NULL;
      REDIST_MPI_CHECK(MPI_Ireduce(from, into, count, type, op, static_cast<int>(r), comm, &request));
      REDIST_MPI_CHECK(wait_collective_yielding(request, comm));
    }
    offset += recvcounts[r];
  }
#endif
}

void put(const void* origin, std::int64_t count, MPI_Datatype type, int target, std::int64_t target_disp, MPI_Win win) {
#ifdef REDIST_HAVE_MPI_LARGE_COUNT
  REDIST_MPI_CHECK(MPI_Put_c(origin, count, type, target, static_cast<MPI_Aint>(target_disp), count, type, win));
#else
  if (fits(count)) {
    REDIST_MPI_CHECK(MPI_Put(origin, static_cast<int>(count), type, target, static_cast<MPI_Aint>(target_disp),
                             static_cast<int>(count), type, win));
    return;
  }
  // Several puts of whole chunks: the target displacement advances by the chunk's extent in displacement units.
  int* unit = nullptr;
  int found = 0;
  REDIST_MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &found));
  const std::int64_t extent = type_extent(type).extent, disp_unit = found && unit ? *unit : 1;
  if (disp_unit <= 0 || extent % disp_unit != 0)
    throw overflow_error("a put of " + std::to_string(count) +
                         " elements needs the MPI-4 large-count calls (the "
                         "window's displacement unit does not divide the datatype's extent)");
  const std::int64_t chunk = chunk_elements();
  for (std::int64_t done = 0; done < count; done += chunk) {
    const int n = static_cast<int>(std::min(chunk, count - done));
    REDIST_MPI_CHECK(MPI_Put(static_cast<const char*>(origin) + times(done, extent, "put"), n, type, target,
                             static_cast<MPI_Aint>(target_disp + done * (extent / disp_unit)), n, type, win));
  }
#endif
}

// ---- one-sided windows ----

bool mca_selection_allows(const std::string& selection, const std::string& component) {
  const bool excluding = !selection.empty() && selection[0] == '^';
  bool listed = false;
  std::size_t start = excluding ? 1 : 0;
  while (start <= selection.size()) {
    const std::size_t comma = std::min(selection.find(',', start), selection.size());
    if (selection.compare(start, comma - start, component) == 0) listed = true;
    start = comma + 1;
  }
  if (selection.empty()) return true;
  return excluding ? !listed : listed;
}

namespace {

// The MPI_T control variable `name` as a string, or false (no such variable, not a string, MPI_T unavailable).
// Read in Open MPI only, the one MPI whose variable is asked for (SimGrid's SMPI has no MPI_T interface).
bool control_variable(const char* name, std::string& value) {
#ifndef OPEN_MPI
  (void)name;
  (void)value;
  return false;
#else
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return false;
  bool read = false;
  int index = 0;
  if (MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS) {
    char found_name[256];
    int name_length = sizeof found_name, verbosity = 0, binding = 0, scope = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum enumtype;
    if (MPI_T_cvar_get_info(index, found_name, &name_length, &verbosity, &type, &enumtype, nullptr, nullptr, &binding,
                            &scope) == MPI_SUCCESS &&
        type == MPI_CHAR && binding == MPI_T_BIND_NO_OBJECT) {
      MPI_T_cvar_handle handle;
      int count = 0;
      if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
        std::vector<char> text(static_cast<std::size_t>(std::max(count, 1)) + 1, '\0');
        if (MPI_T_cvar_read(handle, text.data()) == MPI_SUCCESS) {
          value.assign(text.data());
          read = true;
        }
        MPI_T_cvar_handle_free(&handle);
      }
    }
  }
  MPI_T_finalize();
  return read;
#endif
}

// Open MPI's major version from MPI_Get_library_version ("Open MPI v4.1.4, ..."), or 0 for another MPI.
int open_mpi_major_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return 0;
  const std::string version(text, static_cast<std::size_t>(std::max(length, 0)));
  const std::string prefix = "Open MPI v";
  if (version.compare(0, prefix.size(), prefix) != 0) return 0;
  return std::atoi(version.c_str() + prefix.size());
}

}  // namespace

bool created_windows_reliable(std::string& why) {
  static const std::string reason = [] {
    const int major = open_mpi_major_version();
    if (major == 0 || major >= 5) return std::string();
    std::string selection;
    if (!control_variable("osc", selection))
      return "Open MPI " + std::to_string(major) +
             ".x, whose one-sided component selection (MPI_T \"osc\") could "
             "not be read: osc/rdma may be chosen";
    if (!mca_selection_allows(selection, "rdma")) return std::string();
    return "Open MPI " + std::to_string(major) + ".x selects osc/rdma for MPI_Win_create (osc = \"" + selection +
           "\"), whose windows fail on some ranks and whose puts can spin forever; OMPI_MCA_osc=sm,pt2pt avoids it";
  }();
  why = reason;
  return reason.empty();
}

// ---- info ----

bool info_get(MPI_Info info, const char* key, std::string& value) {
  int found = 0;
#ifdef REDIST_HAVE_MPI_INFO_GET_STRING
  int length = 0;  // 0: asks for the length (with the terminating null)
  char none = '\0';
  REDIST_MPI_CHECK(MPI_Info_get_string(info, key, &length, &none, &found));
  if (!found) return false;
  std::vector<char> text(static_cast<std::size_t>(length) + 1, '\0');
  int capacity = static_cast<int>(text.size());
  REDIST_MPI_CHECK(MPI_Info_get_string(info, key, &capacity, text.data(), &found));
#else
  int length = 0;
  REDIST_MPI_CHECK(MPI_Info_get_valuelen(info, key, &length, &found));
  if (!found) return false;
  std::vector<char> text(static_cast<std::size_t>(length) + 1, '\0');
  REDIST_MPI_CHECK(MPI_Info_get(info, key, length, text.data(), &found));
#endif
  value.assign(text.data());
  return found != 0;
}

}  // namespace redist::mpi
