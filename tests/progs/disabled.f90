! Built with perfmark's no-op module (fortran/perfmark_disabled.f90) in
! place of `use perfmark`'s library: every procedure does nothing, ierr is
! -1 (nothing recorded), perfmark_active() is false, no library is linked.
program disabled
  use perfmark
  implicit none
  integer :: ierr, h, bad
  bad = 0
  call perfmark_region_begin("gone", ierr)
  if (ierr /= -1) bad = bad + 1
  call perfmark_region_end("gone", ierr)
  if (ierr /= -1) bad = bad + 1
  call perfmark_region_begin("no ierr")
  call perfmark_region_end("no ierr")
  h = perfmark_region("gone")
  if (h >= 0) bad = bad + 1
  call perfmark_region_enter(h, ierr)
  if (ierr /= -1) bad = bad + 1
  call perfmark_region_exit(h, ierr)
  if (ierr /= -1) bad = bad + 1
  if (perfmark_active()) bad = bad + 1
  if (bad == 0) then
    print '(a)', "disabled markers (Fortran): ok"
  else
    print '(a)', "disabled markers (Fortran): WRONG RESULTS"
  end if
  if (bad /= 0) error stop 1
end program disabled
