#include "redist/mpi/checked.hpp"

#include <algorithm>
#include <climits>

namespace redist {

static std::string mpi_error_text(const std::string& call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = 0;
  return "MPI call failed: " + call + " returned " + std::to_string(code) + " (" + std::string(text, len) + ")";
}

mpi_error::mpi_error(const std::string& call, int code) : error(mpi_error_text(call, code)), code_(code) {}

namespace mpi {

void check(int code, const char* call) {
  if (code != MPI_SUCCESS) throw mpi_error(call, code);
}

int rank(MPI_Comm comm) {
  int r = 0;
  REDIST_MPI_CHECK(MPI_Comm_rank(comm, &r));
  return r;
}

int size(MPI_Comm comm) {
  int s = 0;
  REDIST_MPI_CHECK(MPI_Comm_size(comm, &s));
  return s;
}

void throw_error(error_kind kind, const std::string& message) {
  switch (kind) {
    case error_kind::invalid_layout: throw invalid_layout(message);
    case error_kind::dimension_mismatch: throw dimension_mismatch(message);
    case error_kind::invalid_argument: throw invalid_argument(message);
    case error_kind::inconsistent_ranks: throw inconsistent_ranks(message);
    case error_kind::overflow: throw overflow_error(message);
    case error_kind::insufficient_memory: throw insufficient_memory(message);
    case error_kind::none: break;
  }
  throw error(message);
}

error_kind kind_of(const error& e) {
  if (dynamic_cast<const invalid_layout*>(&e)) return error_kind::invalid_layout;
  if (dynamic_cast<const dimension_mismatch*>(&e)) return error_kind::dimension_mismatch;
  if (dynamic_cast<const invalid_argument*>(&e)) return error_kind::invalid_argument;
  if (dynamic_cast<const inconsistent_ranks*>(&e)) return error_kind::inconsistent_ranks;
  if (dynamic_cast<const overflow_error*>(&e)) return error_kind::overflow;
  if (dynamic_cast<const insufficient_memory*>(&e)) return error_kind::insufficient_memory;
  return error_kind::invalid_argument;
}

void agree_on_errors(MPI_Comm comm, error_kind kind, const std::string& message) {
  std::vector<std::uint64_t> nothing;
  agree_on_errors(comm, kind, message, nothing);
}

void agree_on_errors(MPI_Comm comm, error_kind kind, const std::string& message,
                     std::vector<std::uint64_t>& reduce_min) {
  const int me = rank(comm);
  const int nranks = size(comm);
  // Entry 0: the lowest failing rank (nranks when none failed), then the caller's values.
  std::vector<std::uint64_t> values(1 + reduce_min.size());
  values[0] = static_cast<std::uint64_t>(kind == error_kind::none ? nranks : me);
  std::copy(reduce_min.begin(), reduce_min.end(), values.begin() + 1);
  REDIST_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_UINT64_T, MPI_MIN,
                                 comm));
  std::copy(values.begin() + 1, values.end(), reduce_min.begin());
  const int first_failing = static_cast<int>(values[0]);
  if (first_failing == nranks) return;
  // The lowest failing rank broadcasts its kind and message so every rank reports the same thing.
  int header[2] = {static_cast<int>(kind), static_cast<int>(message.size())};
  REDIST_MPI_CHECK(MPI_Bcast(header, 2, MPI_INT, first_failing, comm));
  std::string text(static_cast<size_t>(header[1]), '\0');
  if (me == first_failing) text = message;
  if (header[1] > 0) REDIST_MPI_CHECK(MPI_Bcast(text.data(), header[1], MPI_CHAR, first_failing, comm));
  if (me != first_failing) text = "rank " + std::to_string(first_failing) + ": " + text;
  throw_error(static_cast<error_kind>(header[0]), text);
}

bool finalized() noexcept {
  int done = 0;
  MPI_Finalized(&done);
  return done != 0;
}

comm_handle& comm_handle::operator=(comm_handle&& o) noexcept {
  if (this != &o) {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    comm_ = o.comm_;
    o.comm_ = MPI_COMM_NULL;
  }
  return *this;
}

comm_handle::~comm_handle() {
  // A destructor cannot throw; a failing free leaves nothing to recover.
  if (comm_ != MPI_COMM_NULL && !finalized()) MPI_Comm_free(&comm_);
}

datatype_handle& datatype_handle::operator=(datatype_handle&& o) noexcept {
  if (this != &o) {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
    type_ = o.type_;
    o.type_ = MPI_DATATYPE_NULL;
  }
  return *this;
}

datatype_handle::~datatype_handle() {
  if (type_ != MPI_DATATYPE_NULL && !finalized()) MPI_Type_free(&type_);
}

byte_message describe_bytes(std::int64_t bytes) {
  byte_message m;
  if (bytes <= INT_MAX) {
    m.count = static_cast<int>(bytes);
    return m;
  }
  constexpr std::int64_t chunk = std::int64_t(1) << 30;
  const std::int64_t chunks = bytes / chunk;
  const std::int64_t rest = bytes % chunk;
  if (chunks > INT_MAX) throw overflow_error("message of " + std::to_string(bytes) + " bytes exceeds 2^61 bytes");
  MPI_Datatype chunk_type;
  REDIST_MPI_CHECK(MPI_Type_contiguous(static_cast<int>(chunk), MPI_BYTE, &chunk_type));
  datatype_handle chunk_owner(chunk_type);
  int lengths[2] = {static_cast<int>(chunks), static_cast<int>(rest)};
  MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(chunks * chunk)};
  MPI_Datatype types[2] = {chunk_type, MPI_BYTE};
  MPI_Datatype whole;
  REDIST_MPI_CHECK(MPI_Type_create_struct(rest > 0 ? 2 : 1, lengths, displs, types, &whole));
  REDIST_MPI_CHECK(MPI_Type_commit(&whole));
  m.owned = datatype_handle(whole);
  m.type = whole;
  m.count = 1;
  return m;
}

comm_handle split_shared(MPI_Comm comm) {
  MPI_Comm node;
  REDIST_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank(comm), MPI_INFO_NULL, &node));
  return comm_handle(node);
}

}  // namespace mpi
}  // namespace redist
