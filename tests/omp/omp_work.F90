! A gfortran OpenMP program with work known by construction, no markers:
! in subroutine pm_fpages, a team of 4 where thread t first-touches
! (t+1)*N pages of its own, then prints "thread TID T 1". Built twice: alone
! and, with -DUSE_MPI, between MPI_Init and MPI_Finalize (`use mpi`).
! usage: omp_work_f N
program omp_work_f
#ifdef USE_MPI
  use mpi
#endif
  implicit none
  integer :: n, ierr
  character(len=32) :: arg
#ifdef USE_MPI
  call MPI_Init(ierr)
#endif
  n = 200
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  call pm_fpages(n)
#ifdef USE_MPI
  call MPI_Finalize(ierr)
#endif
  ierr = 0
end program omp_work_f

subroutine pm_fpages(n)
  use omp_lib
  use, intrinsic :: iso_c_binding, only : c_int
  implicit none
  integer, intent(in) :: n
  integer :: t, i, pagewords
  integer(8), allocatable :: mem(:)
  character(len=64) :: line
  interface
    integer(c_int) function gettid() bind(C, name="gettid")
      import :: c_int
    end function gettid
  end interface
  pagewords = 512  ! 4 KiB pages of 8-byte words
!$omp parallel num_threads(4) private(t, i, mem, line)
  t = omp_get_thread_num()
  allocate (mem(int((t + 1) * n, 8) * pagewords))
  do i = 1, (t + 1) * n
    mem(int(i - 1, 8) * pagewords + 1) = i
  end do
  write (line, '(A,I0,A,I0,A)') 'thread ', gettid(), ' ', t, ' 1'
!$omp critical
  print '(A)', trim(line)
!$omp end critical
  deallocate (mem)
!$omp end parallel
end subroutine pm_fpages
