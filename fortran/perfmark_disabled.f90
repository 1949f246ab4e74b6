! perfmark_disabled.f90 — `use perfmark` that does nothing and needs no
! library: the same module name and the same procedures as perfmark.f90,
! each a no-op (ierr = -1, "nothing recorded"; perfmark_region() = -1;
! perfmark_active() = .false.).
!
! Fortran has no -DPERFMARK_DISABLE for a module compiled elsewhere: to
! build a code without perfmark, compile this file with the code (first, so
! that its perfmark.mod is the one found) and drop -lperfmark_fortran
! -lperfmark. Installed as <prefix>/share/perfmark/fortran/perfmark_disabled.f90.
module perfmark
  implicit none
  private
  public :: perfmark_region_begin, perfmark_region_end, perfmark_active
  public :: perfmark_region, perfmark_region_enter, perfmark_region_exit

contains

  subroutine perfmark_region_begin(name, ierr)
    character(len=*), intent(in) :: name
    integer, intent(out), optional :: ierr
    if (present(ierr)) ierr = -1
  end subroutine

  subroutine perfmark_region_end(name, ierr)
    character(len=*), intent(in) :: name
    integer, intent(out), optional :: ierr
    if (present(ierr)) ierr = -1
  end subroutine

  function perfmark_region(name) result(h)
    character(len=*), intent(in) :: name
    integer :: h
    h = -1
  end function

  subroutine perfmark_region_enter(h, ierr)
    integer, intent(in) :: h
    integer, intent(out), optional :: ierr
    if (present(ierr)) ierr = -1
  end subroutine

  subroutine perfmark_region_exit(h, ierr)
    integer, intent(in) :: h
    integer, intent(out), optional :: ierr
    if (present(ierr)) ierr = -1
  end subroutine

  logical function perfmark_active()
    perfmark_active = .false.
  end function

end module perfmark
