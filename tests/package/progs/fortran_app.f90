! `use perfmark` from Fortran. Ground truth for n = 7:
!   solve 7; solve/halo 14 (name from a blank-padded variable: trimmed);
!   loop 7 (handle API), with ierr 0 when measured.
program fortran_app
  use perfmark
  implicit none
  character(len=16) :: nm
  integer :: i, j, h, ierr
  real(8) :: x
  nm = "halo"
  x = 0
  h = perfmark_region("loop")
  do i = 1, 7
    call perfmark_region_begin("solve", ierr)
    if (perfmark_active() .and. ierr /= 0) stop 3
    do j = 1, 2
      call perfmark_region_begin(nm)
      x = x + i * j
      call perfmark_region_end(nm)
    end do
    call perfmark_region_end("solve")
    call perfmark_region_enter(h)
    x = x + 1
    call perfmark_region_exit(h, ierr)
  end do
  print '(a,f6.1,a,l1)', "fortran: x=", x, " active=", perfmark_active()
end program
