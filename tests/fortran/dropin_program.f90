! SPDX-License-Identifier: BSD-3-Clause
! A Fortran program as ScaLAPACK users write them, linked with libredist_scalapack ahead of ScaLAPACK:
! its PDGEMR2D, PDTRMR2D, PDTRAN and PDGEMM calls run redist. B = A between two different block-cyclic grids
! (5x4 blocks -> 7x3 blocks, B's descriptor built by hand with its DTYPE left 0 on process 0, as ScaLAPACK's own
! REDIST testers leave it; a sub-matrix), the same for the upper trapezoid only,
! then C = 0.5*C + 2*A^T, then D = A*A^T (D starting as NaN, beta = 0); every local element is checked against
! its analytic value (D's against the serial product, exact: integer values). This PDGEMM is small enough to be
! handed to ScaLAPACK's by default, so ctest runs the program with REDIST_PDGEMM_DELEGATE_BELOW=0 (and
! REDIST_PTRAN_DELEGATE_BELOW=0: a transpose of this size could be learned faster through ScaLAPACK, though not on
! its first call). Exits with status 1 on any wrong element.
program dropin_program
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan, ieee_is_nan
  implicit none
  integer, parameter :: m = 45, n = 38
  integer :: me, nprocs, system_context, ctxt_a, ctxt_b, prow, pcol, myrow, mycol, brow, bcol
  integer :: desca(9), descb(9), descc(9), descd(9), info, lda, ldb, ldc, ldd, la_rows, la_cols, lb_rows
  integer :: lb_cols, lc_rows, lc_cols, ld_rows, ld_cols, i, j, l, gi, gj, wrong, total_wrong, ierr
  double precision :: expected
  double precision, allocatable :: a(:, :), b(:, :), c(:, :), d(:, :)
  integer, external :: numroc, indxl2g
  include 'mpif.h'

  call blacs_pinfo(me, nprocs)
  prow = 1
  do i = 1, nprocs
    if (mod(nprocs, i) == 0 .and. i * i <= nprocs) prow = i
  end do
  pcol = nprocs / prow
  call blacs_get(-1, 0, system_context)
  ctxt_a = system_context
  call blacs_gridinit(ctxt_a, 'R', prow, pcol)
  call blacs_gridinfo(ctxt_a, prow, pcol, myrow, mycol)
  call blacs_get(-1, 0, system_context)
  ctxt_b = system_context
  call blacs_gridinit(ctxt_b, 'C', pcol, prow)
  call blacs_gridinfo(ctxt_b, pcol, prow, brow, bcol)

  ! A: m x n in 5 x 4 blocks on prow x pcol; B: m x n in 7 x 3 blocks on pcol x prow (column-major grid).
  ! REDIST never reads a descriptor's DTYPE: B's is left unset (0) on process 0.
  la_rows = numroc(m, 5, myrow, 0, prow)
  la_cols = numroc(n, 4, mycol, 0, pcol)
  lda = max(1, la_rows)
  call descinit(desca, m, n, 5, 4, 0, 0, ctxt_a, lda, info)
  lb_rows = local_count(m, 7, 7, brow, pcol)
  lb_cols = local_count(n, 3, 3, bcol, prow)
  ldb = max(1, lb_rows)
  descb = (/ 1, ctxt_b, m, n, 7, 3, 0, 0, ldb /)
  if (me == 0) descb(1) = 0
  allocate (a(lda, max(1, la_cols)), b(ldb, max(1, lb_cols)))
  do j = 1, la_cols
    do i = 1, la_rows
      a(i, j) = value_of(indxl2g(i, 5, myrow, 0, prow), indxl2g(j, 4, mycol, 0, pcol))
    end do
  end do
  b = -1.0d0

  ! B(2:m, 3:n) = A(1:m-1, 1:n-2)
  call pdgemr2d(m - 1, n - 2, a, 1, 1, desca, b, 2, 3, descb, ctxt_a)
  wrong = 0
  do j = 1, lb_cols
    do i = 1, lb_rows
      gi = global_of(i, 7, 7, brow, pcol)
      gj = global_of(j, 3, 3, bcol, prow)
      if (gi >= 2 .and. gj >= 3) then
        if (b(i, j) /= value_of(gi - 1, gj - 2)) wrong = wrong + 1
      else
        if (b(i, j) /= -1.0d0) wrong = wrong + 1
      end if
    end do
  end do

  ! The upper trapezoid of the same 44 x 36 sub-matrix: REDIST's diagonal ends in the sub-matrix's
  ! bottom-right corner, so row si, column sj (1-based in the sub-matrix) is copied when si <= sj + 8.
  b = -1.0d0
  call pdtrmr2d('U', 'N', m - 1, n - 2, a, 1, 1, desca, b, 2, 3, descb, ctxt_a)
  do j = 1, lb_cols
    do i = 1, lb_rows
      gi = global_of(i, 7, 7, brow, pcol)
      gj = global_of(j, 3, 3, bcol, prow)
      if (gi >= 2 .and. gj >= 3 .and. gi - 1 <= gj - 2 + (m - 1) - (n - 2)) then
        if (b(i, j) /= value_of(gi - 1, gj - 2)) wrong = wrong + 1
      else
        if (b(i, j) /= -1.0d0) wrong = wrong + 1
      end if
    end do
  end do

  ! C (n x m, 6 x 6 blocks on A's grid) = 0.5*C + 2*A^T
  lc_rows = numroc(n, 6, myrow, 0, prow)
  lc_cols = numroc(m, 6, mycol, 0, pcol)
  ldc = max(1, lc_rows)
  call descinit(descc, n, m, 6, 6, 0, 0, ctxt_a, ldc, info)
  allocate (c(ldc, max(1, lc_cols)))
  c = 4.0d0
  call pdtran(n, m, 2.0d0, a, 1, 1, desca, 0.5d0, c, 1, 1, descc)
  do j = 1, lc_cols
    do i = 1, lc_rows
      gi = indxl2g(i, 6, myrow, 0, prow)
      gj = indxl2g(j, 6, mycol, 0, pcol)
      if (c(i, j) /= 2.0d0 + 2.0d0 * value_of(gj, gi)) wrong = wrong + 1
    end do
  end do

  ! D (m x m, 4 x 4 blocks on A's grid) = A*A^T
  ld_rows = numroc(m, 4, myrow, 0, prow)
  ld_cols = numroc(m, 4, mycol, 0, pcol)
  ldd = max(1, ld_rows)
  call descinit(descd, m, m, 4, 4, 0, 0, ctxt_a, ldd, info)
  allocate (d(ldd, max(1, ld_cols)))
  d = ieee_value(0.0d0, ieee_quiet_nan)
  call pdgemm('N', 'T', m, m, n, 1.0d0, a, 1, 1, desca, a, 1, 1, desca, 0.0d0, d, 1, 1, descd)
  do j = 1, ld_cols
    do i = 1, ld_rows
      gi = indxl2g(i, 4, myrow, 0, prow)
      gj = indxl2g(j, 4, mycol, 0, pcol)
      expected = 0.0d0
      do l = 1, n
        expected = expected + value_of(gi, l) * value_of(gj, l)
      end do
      if (ieee_is_nan(d(i, j)) .or. d(i, j) /= expected) wrong = wrong + 1
    end do
  end do

  call mpi_allreduce(wrong, total_wrong, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (me == 0) print '(a, i0, a, i0, a)', 'dropin_program: ', total_wrong, ' wrong elements on ', nprocs, ' ranks'
  call blacs_gridexit(ctxt_a)
  call blacs_gridexit(ctxt_b)
  call blacs_exit(0)
  if (total_wrong /= 0) error stop 1

contains

  ! Owner (0-based) of global index g (1-based) of a dimension dealt from process 0: a first block of
  ! `first`, then blocks of `block`, cyclically over `procs`.
  integer function owner_of(g, first, block, procs)
    integer, intent(in) :: g, first, block, procs
    if (g <= first) then
      owner_of = 0
    else
      owner_of = mod(1 + (g - first - 1) / block, procs)
    end if
  end function owner_of

  integer function local_count(extent, first, block, me, procs)
    integer, intent(in) :: extent, first, block, me, procs
    integer :: g
    local_count = 0
    do g = 1, extent
      if (owner_of(g, first, block, procs) == me) local_count = local_count + 1
    end do
  end function local_count

  ! Global index of local index l (1-based) on process me.
  integer function global_of(l, first, block, me, procs)
    integer, intent(in) :: l, first, block, me, procs
    integer :: seen
    seen = 0
    global_of = 0
    do while (seen < l)
      global_of = global_of + 1
      if (owner_of(global_of, first, block, procs) == me) seen = seen + 1
    end do
  end function global_of

  double precision function value_of(gi, gj)
    integer, intent(in) :: gi, gj
    value_of = dble(gi) + 1000.0d0 * dble(gj)
  end function value_of

end program dropin_program
