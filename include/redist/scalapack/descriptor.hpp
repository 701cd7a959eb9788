// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// ScaLAPACK array descriptors as redist layouts, with the reference implementation's argument checks.
//
// First building block of the ScaLAPACK drop-in entry points (p?gemr2d, p?trmr2d, p?tran/p?tranu/p?tranc, p?gemm):
// pure C++, no BLACS. The process grid of a BLACS context is passed in as plain data (process_grid); the
// glue that asks BLACS for it lives with the entry points.
//
// Descriptor formats (ScaLAPACK's DTYPE_ entry):
//   DTYPE 1 (BLOCK_CYCLIC_2D, 9 entries):      DTYPE CTXT M N MB NB RSRC CSRC LLD
//   DTYPE 2 (BLOCK_CYCLIC_2D_INB, 11 entries): DTYPE CTXT M N IMB INB MB NB RSRC CSRC LLD
// Both are normalized to the 11-entry form, DTYPE 1 with IMB = MB and INB = NB, as PBLAS does on entry.
//
// Error codes (`info`, as passed to PXERBLA / reported by PBLAS): 0 = fine; -(p) when the scalar argument
// at position p (1-based) is wrong; -(p*100 + e) when entry e (1-based) of the descriptor at position p is
// wrong. PBLAS numbers descriptor entries in the normalized 11-entry form even for DTYPE 1 descriptors
// (a bad RSRC of a 9-entry descriptor is reported as entry 9, a bad LLD as entry 11); entry_numbering
// selects that (the default) or the caller's own positions.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "redist/layout/grid_layout.hpp"

namespace redist::scalapack {

/// Descriptor types (value of the DTYPE entry).
inline constexpr std::int64_t block_cyclic_2d = 1;      ///< 9 entries
inline constexpr std::int64_t block_cyclic_2d_inb = 2;  ///< 11 entries
inline constexpr int descriptor_length = 11;            ///< entries of the normalized form
inline constexpr int descriptor_length_1 = 9;           ///< entries of a DTYPE 1 descriptor

/// Entries of the normalized (BLOCK_CYCLIC_2D_INB) form, 0-based as PBLAS's DTYPE_ ... LLD_.
enum class desc_entry : int { dtype = 0, ctxt, m, n, imb, inb, mb, nb, rsrc, csrc, lld };

/// A descriptor in the normalized 11-entry form, remembering where each entry was in the caller's array.
struct descriptor {
  std::int64_t dtype = block_cyclic_2d_inb;  ///< the caller's DTYPE, kept as given (1, 2 or anything else)
  std::int64_t ctxt = -1;
  std::int64_t m = 0, n = 0;        ///< global matrix M_ x N_
  std::int64_t imb = 1, inb = 1;    ///< first block (IMB_, INB_); = mb, nb for DTYPE 1
  std::int64_t mb = 1, nb = 1;      ///< block sizes
  std::int64_t rsrc = 0, csrc = 0;  ///< grid row/column of the first block (-1: replicated, PBLAS only)
  std::int64_t lld = 1;             ///< leading dimension of the local array (local)
  /// position[e]: 1-based position of normalized entry e in the caller's array (DTYPE 1: IMB/INB share
  /// MB's and NB's positions 5 and 6). For a DTYPE other than 1 or 2 only DTYPE and CTXT were read (the
  /// length of the array is unknown) and the other entries have position 0 and PBLAS's placeholder values
  /// (M = N = 0, blocks 1, sources 0, LLD 1).
  std::array<int, descriptor_length> position{};

  /// DTYPE is 1 or 2.
  bool known_type() const noexcept { return dtype == block_cyclic_2d || dtype == block_cyclic_2d_inb; }
  std::int64_t value(desc_entry e) const noexcept;  ///< the normalized entry e (0 for a value outside desc_entry)
  /// position[e]; e must be an enumerator of desc_entry.
  int position_of(desc_entry e) const noexcept { return position[static_cast<size_t>(e)]; }
  /// The normalized array as PBLAS builds it (PB_CargFtoC): DTYPE_ = 2 for DTYPE 1 and 2, unchanged otherwise.
  std::array<std::int64_t, descriptor_length> normalized() const noexcept;
};

/// How parse_descriptor takes the caller's DTYPE.
enum class dtype_fallback {
  placeholder,    ///< PBLAS (PB_CargFtoC): 9 entries for DTYPE 1, 11 for DTYPE 2; any other DTYPE: read DTYPE and
                  ///< CTXT only, keep the DTYPE, placeholder values
  read_as_type1,  ///< REDIST (p?gemr2d, p?trmr2d): DTYPE is not read; always 9 entries as a DTYPE 1 descriptor,
                  ///< recorded as DTYPE 1 (the reference reads every descriptor so, whatever DTYPE says)
};
/// Reads a caller's descriptor as `fallback` says. Throws invalid_argument for a null pointer.
/// @pre desc holds 9 entries (DTYPE 1, or any DTYPE with read_as_type1), 11 (DTYPE 2) or at least 2 (any other
///   DTYPE with placeholder)
/// @throws invalid_argument desc is null
descriptor parse_descriptor(const int* desc, dtype_fallback fallback = dtype_fallback::placeholder);
/// The same for a descriptor of 64-bit integers.
/// @pre as for the int form
/// @throws invalid_argument desc is null
descriptor parse_descriptor(const std::int64_t* desc, dtype_fallback fallback = dtype_fallback::placeholder);

/// Name of a normalized entry ("DTYPE", "CTXT", "M", ... "LLD"); "?" for a value outside desc_entry.
const char* entry_name(desc_entry e) noexcept;

/// The process grid of a BLACS context, as plain data.
struct process_grid {
  int proc_rows = 0, proc_cols = 0;
  int my_row = -1, my_col = -1;     ///< this process's grid coordinates; -1 when it is not in the grid
  std::vector<int> position_ranks;  ///< communicator rank at each grid position, row-major (proc_rows*proc_cols)

  bool contains_me() const noexcept { return my_row >= 0 && my_col >= 0; }  ///< this process is on the grid
  /// Throws invalid_argument unless the grid is at least 1x1, position_ranks has proc_rows*proc_cols
  /// distinct non-negative entries and (my_row, my_col) is on the grid or (-1, -1).
  /// @throws invalid_argument an empty grid, a position_ranks of the wrong length, a negative or repeated rank, or
  ///   (my_row, my_col) neither on the grid nor (-1, -1)
  void validate() const;
};

/// Rows (or columns) of a dimension of n global indices held by grid coordinate `proc`: first block `first`,
/// then blocks of `block`, dealt cyclically over `nprocs` from `src` (PBLAS's NUMROC for IA = 1). As in PBLAS,
/// a replicated dimension (src < 0) or a single process holds all n. Requires first, block >= 1.
/// Throws nothing.
/// @pre first >= 1 and block >= 1 (else the count means nothing; block 0 divides by zero)
std::int64_t numroc(std::int64_t n, std::int64_t first, std::int64_t block, std::int64_t proc, std::int64_t src,
                    std::int64_t nprocs);

/// The layout of sub( A ) = A(ia:ia+m-1, ja:ja+n-1) (ia, ja 1-based) of the matrix described by `desc` on
/// `grid`, with the local storage of communicator rank `my_rank` (the rank at grid position (pr, pc) is
/// grid.position_ranks[pr*proc_cols + pc]; a rank not on the grid, or -1, has no local blocks):
/// block-cyclic with first blocks IMB/INB, RSRC/CSRC, column-major local array with leading dimension LLD
/// (ScaLAPACK's local array exactly; the engine's base pointer is the local array A, not A(ia, ja)).
/// grid.my_row / my_col are not consulted.
/// An empty sub-matrix (m == 0 or n == 0) does not look at the descriptor (REDIST returns before reading it,
/// PBLAS relaxes its checks): it is an m x n layout with at most one (empty) block, at grid position (0, 0).
/// Throws invalid_argument for anything the layout cannot describe: m or n negative, a DTYPE other than
/// 1 or 2, block sizes below 1, RSRC/CSRC outside the grid (including PBLAS's replicated -1), the
/// sub-matrix outside the matrix, an invalid grid, or an LLD smaller than the local rows on a rank that
/// holds part of the matrix (LLD is not used elsewhere). Run the reference checks below first to report
/// ScaLAPACK's error codes.
/// @throws invalid_argument m or n negative, an invalid grid (process_grid::validate), and for a non-empty
///   sub-matrix: an unknown DTYPE, a block size below 1, RSRC or CSRC outside the grid, the sub-matrix outside
///   the matrix, or an LLD below the local rows of a rank that holds part of the matrix
grid_layout layout_of(std::int64_t m, std::int64_t n, std::int64_t ia, std::int64_t ja, const descriptor& desc,
                      const process_grid& grid, int my_rank);

// ---- PBLAS argument checks (PBLAS/SRC/PTOOLS/PB_Cchkmat.c, PBLAS/SRC/p?tran*_.c, p?gemm_.c) -------------------------

enum class entry_numbering {
  pblas,   ///< entries of the normalized 11-entry form, as the reference reports them (default)
  caller,  ///< the entry's position in the caller's array (differs for DTYPE 1: RSRC 7, CSRC 8, LLD 9)
};

/// The reference's check of a matrix operand sub( A ) = A(ia:ia+m-1, ja:ja+n-1), PB_Cchkmat: `m_pos`, `n_pos`
/// and `desc_pos` are the argument positions of M, N and DESCA in the calling routine; IA and JA are taken to
/// be at desc_pos-2 and desc_pos-1. `context` is the operation's context (compared with DESCA's CTXT) and
/// `grid` that context's grid. `info` is the code found so far (0 or negative): the result is the error with
/// the smallest position among it and this operand's, as in the reference, which lets several operands be
/// checked in a row. Checks, as the reference does them:
///   M < 0 (-m_pos), N < 0 (-n_pos), IA < 1 (-(desc_pos-2)), JA < 1 (-(desc_pos-1));
///   DTYPE not 1 or 2 (entry 1; nothing else of this descriptor is checked then);
///   CTXT != context (entry 2; nothing else checked then; also when this process is not on `grid`, which
///     the reference's callers rule out beforehand);
///   IMB, INB, MB, NB < 1 (entries 5-8); RSRC, CSRC < -1 or beyond the grid (entries 9, 10);
///   if M == 0 or N == 0: M_ < 0, N_ < 0 (entries 3, 4), LLD < 1 (entry 11), nothing else;
///   otherwise: M_ < 1, N_ < 1 (entries 3, 4); when M_, N_ >= 1: IA+M-1 > M_ (-(desc_pos-2)),
///     JA+N-1 > N_ (-(desc_pos-1)); and only when no error has been found so far (including `info`):
///     LLD < 1, or LLD < max(1, local rows of A) on a process holding columns of A (entry 11).
/// Throws nothing: every problem is a code.
int check_matrix(const process_grid& grid, std::int64_t context, std::int64_t m, int m_pos, std::int64_t n, int n_pos,
                 std::int64_t ia, std::int64_t ja, const descriptor& desc, int desc_pos, int info = 0,
                 entry_numbering numbering = entry_numbering::pblas);

/// The argument checks of PBLAS's p?tran, p?tranu, p?tranc (sub( C ) := beta*sub( C ) + alpha*op( sub( A ) ),
/// sub( A ) n x m, sub( C ) m x n). Argument positions: M=1, N=2, ALPHA=3, A=4, IA=5, JA=6, DESCA=7, BETA=8,
/// C=9, IC=10, JC=11, DESCC=12. `grid_a` is the grid of DESCA's context as seen by this process. Returns
/// -702 when this process is not on that grid; otherwise check_matrix for A (rows N at 2, columns M at 1)
/// then for C (M at 1, N at 2) with A's context, so C in another context is -1202. Throws nothing.
int check_tran(const process_grid& grid_a, std::int64_t m, std::int64_t n, std::int64_t ia, std::int64_t ja,
               const descriptor& desca, std::int64_t ic, std::int64_t jc, const descriptor& descc,
               entry_numbering numbering = entry_numbering::pblas);

/// The argument checks of PBLAS's p?gemm (sub( C ) := alpha*op( sub( A ) )*op( sub( B ) ) + beta*sub( C ), with
/// op( sub( A ) ) m x k, op( sub( B ) ) k x n, sub( C ) m x n). Argument positions: TRANSA=1, TRANSB=2, M=3, N=4,
/// K=5, ALPHA=6, A=7, IA=8, JA=9, DESCA=10, B=11, IB=12, JB=13, DESCB=14, BETA=15, C=16, IC=17, JC=18, DESCC=19.
/// `transa` and `transb` are the first characters of TRANSA and TRANSB; `grid_a` is the grid of DESCA's context
/// as seen by this process. Returns -1002 when this process is not on that grid; otherwise -1 for a TRANSA other
/// than N, T or C (either case), else -2 for such a TRANSB, merged with check_matrix for A (M x K, or K x M unless
/// TRANSA is N), B (K x N, or N x K unless TRANSB is N) and C (M x N), all against A's context (B in another
/// context is -1402, C -1902): the smallest position wins, as in the reference. Throws nothing.
int check_gemm(const process_grid& grid_a, char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
               std::int64_t ia, std::int64_t ja, const descriptor& desca, std::int64_t ib, std::int64_t jb,
               const descriptor& descb, std::int64_t ic, std::int64_t jc, const descriptor& descc,
               entry_numbering numbering = entry_numbering::pblas);

/// "Parameter number P[, entry number E] had an illegal value" for a non-zero info (own wording). Throws nothing.
std::string describe_info(int info);

/// ---- REDIST checks (p?gemr2d, p?trmr2d: REDIST/SRC/p?gemr.c, p?trmr.c, pgemraux.c) -----------------------
///
/// The reference reports no info code: it returns at once when M == 0 or N == 0 (nothing checked), and
/// otherwise, per operand (A, then B), prints a message on stderr and calls exit(1) on the first problem
/// found by paramcheck() (pgemraux.c). It reads every descriptor as 9 DTYPE 1 entries whatever DTYPE says.
/// In its normal (NDEBUG) build it does not check DTYPE, M < 0, N < 0, block sizes (MB or NB < 1 divide by
/// zero) or LLD < 1. Processes outside a grid take that grid's parameters from the processes on it (a
/// minimum reduction; exit(1) when the grid has no process); paramcheck() also exits when a process's grid
/// shape differs from the agreed one. Both are the BLACS glue's business and have no counterpart here.
enum class gemr2d_problem {
  none,
  source_process,     ///< RSRC or CSRC outside [0, grid rows/columns)
  submatrix,          ///< IA < 1, JA < 1, IA+M-1 > M_ or JA+N-1 > N_
  block_size,         ///< MB, NB (or IMB, INB) < 1: not checked by the reference, which divides by zero
  leading_dimension,  ///< this process is on the grid and LLD < its local rows of A (whatever its columns)
};
/// REDIST's paramcheck() for one operand, in its order (block_size placed where the reference would first
/// divide by it); the LLD test only where this process is on the grid. For DTYPE 2 descriptors (which REDIST
/// misreads) the local row count uses IMB as well. Throws nothing: every problem is a gemr2d_problem.
gemr2d_problem check_gemr2d_operand(std::int64_t m, std::int64_t n, std::int64_t ia, std::int64_t ja,
                                    const descriptor& desc, const process_grid& grid);
/// A message for a problem (own wording), naming the operand and the values. Throws nothing.
/// @pre for leading_dimension: desc's IMB and MB >= 1 (as check_gemr2d_operand ensures before reporting it)
std::string describe_gemr2d_problem(gemr2d_problem problem, const char* operand, std::int64_t m, std::int64_t n,
                                    std::int64_t ia, std::int64_t ja, const descriptor& desc, const process_grid& grid);

}  // namespace redist::scalapack
