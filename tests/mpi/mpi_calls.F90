! MPI calls from Fortran whose number and bytes are known by construction,
! in user regions. Built twice: with `use mpi` and with -DUSE_F08 `use mpi_f08`
! (the wrappers mpi_xxx_ and mpi_xxx_f08_). check_mpi.py (expect_fortran)
! holds the expected numbers. Rank r of n, next = mod(r+1,n), prev = mod(r-1+n,n):
!   p2p          r+1 Sends of 10(r+1) doubles; Recvs with status (capacity 1000)
!   ignore       one Send of 5 integers, its Recv with MPI_STATUS_IGNORE
!   derived      one Send of 4 "triples" (contiguous 3 doubles), Recv with status
!   nonblocking  Irecv + Isend of 7 reals, Waitall
!   coll         3 Allreduce of 4 integers, Bcast of 6 integers, Alltoallv (r+j+1
!                integers to rank j)
!   inplace      Allreduce of 5 doubles and Allgather of 2 integers, MPI_IN_PLACE
!   io           File_open (a character argument), write_at and read_at of 8
!                integers, File_close
! usage: mpi_calls_f90|mpi_calls_f08 [init_thread|abort]  (abort: rank 1, at the end)
program mpi_calls
#ifdef USE_F08
  use mpi_f08
#define HANDLE(t) type(t)
#define STATUS_DECL type(MPI_Status) :: st
#define REQUESTS type(MPI_Request) :: req(2)
#else
  use mpi
#define HANDLE(t) integer
#define STATUS_DECL integer :: st(MPI_STATUS_SIZE)
#define REQUESTS integer :: req(2)
#endif
  use, intrinsic :: iso_c_binding, only : c_int, c_char, c_null_char
  implicit none
  interface
    integer(c_int) function region_begin(name) bind(C, name="perfmark_region_begin")
      import :: c_int, c_char
      character(kind=c_char), dimension(*) :: name
    end function
    integer(c_int) function region_end(name) bind(C, name="perfmark_region_end")
      import :: c_int, c_char
      character(kind=c_char), dimension(*) :: name
    end function
  end interface
  integer :: ierr, rank, nranks, next, prev, k, i, j, got, bad, rc, provided
  character(len=16) :: arg
  integer :: five(5), five_in(5), four(4), four_sum(4), six(6), blocks(64), iout(8), iin(8)
  double precision :: dout(1000), din(1000), t_out(12), t_in(30), d5(5)
  real :: f_out(7), f_in(7)
  integer, allocatable :: scounts(:), sdispls(:), rcounts(:), rdispls(:), a2a_out(:), a2a_in(:)
  integer(kind=MPI_OFFSET_KIND) :: offset
  HANDLE(MPI_Datatype) :: triple
  HANDLE(MPI_File) :: fh
  STATUS_DECL
  REQUESTS

  bad = 0
  call get_command_argument(1, arg)
  if (arg == "init_thread") then
    call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  else
    call MPI_Init(ierr)
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  next = mod(rank + 1, nranks)
  prev = mod(rank - 1 + nranks, nranks)

  rc = region_begin("p2p"//c_null_char)
  do k = 1, rank + 1
    dout(1:10*(rank+1)) = rank + 0.5d0
    call MPI_Send(dout, 10*(rank+1), MPI_DOUBLE_PRECISION, next, 1, MPI_COMM_WORLD, ierr)
  end do
  do k = 1, prev + 1
    call MPI_Recv(din, 1000, MPI_DOUBLE_PRECISION, prev, 1, MPI_COMM_WORLD, st, ierr)
    call MPI_Get_count(st, MPI_DOUBLE_PRECISION, got, ierr)
    if (got /= 10*(prev+1) .or. nint(2 * din(1)) /= 2 * prev + 1) bad = 1
  end do
  rc = region_end("p2p"//c_null_char)

  five = (/ rank, 1, 2, 3, 4 /)
  rc = region_begin("ignore"//c_null_char)
  call MPI_Send(five, 5, MPI_INTEGER, next, 2, MPI_COMM_WORLD, ierr)
  call MPI_Recv(five_in, 5, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  rc = region_end("ignore"//c_null_char)
  if (five_in(1) /= prev) bad = 1

  call MPI_Type_contiguous(3, MPI_DOUBLE_PRECISION, triple, ierr)
  call MPI_Type_commit(triple, ierr)
  t_out = rank * 100
  rc = region_begin("derived"//c_null_char)
  call MPI_Send(t_out, 4, triple, next, 3, MPI_COMM_WORLD, ierr)
  call MPI_Recv(t_in, 10, triple, prev, 3, MPI_COMM_WORLD, st, ierr)
  rc = region_end("derived"//c_null_char)
  if (nint(t_in(12)) /= prev * 100) bad = 1
  call MPI_Type_free(triple, ierr)

  f_out = rank
  rc = region_begin("nonblocking"//c_null_char)
  call MPI_Irecv(f_in, 7, MPI_REAL, prev, 5, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Isend(f_out, 7, MPI_REAL, next, 5, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
  rc = region_end("nonblocking"//c_null_char)
  if (nint(f_in(7)) /= prev) bad = 1

  four = (/ 1, 2, 3, rank /)
  six = 0
  if (rank == 0) six = 1000
  allocate(scounts(nranks), sdispls(nranks), rcounts(nranks), rdispls(nranks))
  do j = 1, nranks
    scounts(j) = rank + j
    rcounts(j) = j + rank
  end do
  sdispls(1) = 0
  rdispls(1) = 0
  do j = 2, nranks
    sdispls(j) = sdispls(j-1) + scounts(j-1)
    rdispls(j) = rdispls(j-1) + rcounts(j-1)
  end do
  allocate(a2a_out(sum(scounts)), a2a_in(sum(rcounts)))
  a2a_out = rank
  rc = region_begin("coll"//c_null_char)
  do k = 1, 3
    call MPI_Allreduce(four, four_sum, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  call MPI_Bcast(six, 6, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Alltoallv(a2a_out, scounts, sdispls, MPI_INTEGER, a2a_in, rcounts, rdispls, &
                     MPI_INTEGER, MPI_COMM_WORLD, ierr)
  rc = region_end("coll"//c_null_char)
  if (four_sum(1) /= nranks .or. six(6) /= 1000 .or. a2a_in(sum(rcounts)) /= nranks - 1) bad = 1

  d5 = 1
  blocks = 0
  blocks(2*rank+1:2*rank+2) = rank + 1
  rc = region_begin("inplace"//c_null_char)
  call MPI_Allreduce(MPI_IN_PLACE, d5, 5, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, blocks, 2, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  rc = region_end("inplace"//c_null_char)
  if (nint(d5(1)) /= nranks .or. blocks(2*nranks) /= nranks) bad = 1

  iout = (/ (rank * 8 + i, i = 0, 7) /)
  offset = rank * 32
  rc = region_begin("io"//c_null_char)
  call MPI_File_open(MPI_COMM_WORLD, "mpi_calls_f.io", MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  call MPI_File_write_at(fh, offset, iout, 8, MPI_INTEGER, st, ierr)
  call MPI_File_read_at(fh, offset, iin, 8, MPI_INTEGER, st, ierr)
  call MPI_File_close(fh, ierr)
  rc = region_end("io"//c_null_char)
  if (iin(8) /= rank * 8 + 7) bad = 1
  if (arg == "abort" .and. rank == 1) call MPI_Abort(MPI_COMM_WORLD, 7, ierr)

  if (bad == 0) then
    print '(a,i0,a,i0,a)', 'mpi_calls_f rank ', rank, ' of ', nranks, ': ok'
  else
    print '(a,i0,a,i0,a)', 'mpi_calls_f rank ', rank, ' of ', nranks, ': WRONG'
  end if
  call MPI_Finalize(ierr)
  if (bad /= 0) stop 1
end program mpi_calls
