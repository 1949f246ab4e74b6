! perfmark.f90 — Fortran interface to the perfmark region markers.
!
!     use perfmark
!     call perfmark_region_begin("solve")
!     ...
!     call perfmark_region_end("solve")
!
! Names are ordinary Fortran strings; trailing blanks are dropped (the Fortran
! convention for fixed-length character variables) and a NUL is appended
! before the call into the C API (include/perfmark.h). The optional `ierr`
! receives the C return code: 0 recorded, -1 nothing recorded (perfmark
! inactive, or an unbalanced call). Link with -lperfmark_fortran -lperfmark.
module perfmark
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_int32_t, c_null_char
  implicit none
  private
  public :: perfmark_region_begin, perfmark_region_end, perfmark_active
  public :: perfmark_region, perfmark_region_enter, perfmark_region_exit

  interface
    function pm_c_begin(name) bind(C, name="perfmark_region_begin") result(rc)
      import :: c_char, c_int
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int) :: rc
    end function
    function pm_c_end(name) bind(C, name="perfmark_region_end") result(rc)
      import :: c_char, c_int
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int) :: rc
    end function
    function pm_c_region(name) bind(C, name="perfmark_region") result(h)
      import :: c_char, c_int32_t
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int32_t) :: h
    end function
    function pm_c_enter(h) bind(C, name="perfmark_region_enter") result(rc)
      import :: c_int, c_int32_t
      integer(c_int32_t), value :: h
      integer(c_int) :: rc
    end function
    function pm_c_exit(h) bind(C, name="perfmark_region_exit") result(rc)
      import :: c_int, c_int32_t
      integer(c_int32_t), value :: h
      integer(c_int) :: rc
    end function
    function pm_c_active() bind(C, name="perfmark_active") result(on)
      import :: c_int
      integer(c_int) :: on
    end function
  end interface

contains

  subroutine perfmark_region_begin(name, ierr)
    character(len=*), intent(in) :: name
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    rc = pm_c_begin(trim(name) // c_null_char)
    if (present(ierr)) ierr = int(rc)
  end subroutine

  subroutine perfmark_region_end(name, ierr)
    character(len=*), intent(in) :: name
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    rc = pm_c_end(trim(name) // c_null_char)
    if (present(ierr)) ierr = int(rc)
  end subroutine

  ! Handle API: resolve a name once, then enter/exit without string work.
  ! A negative handle (perfmark inactive) is accepted and does nothing.
  function perfmark_region(name) result(h)
    character(len=*), intent(in) :: name
    integer :: h
    h = int(pm_c_region(trim(name) // c_null_char))
  end function

  subroutine perfmark_region_enter(h, ierr)
    integer, intent(in) :: h
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    rc = pm_c_enter(int(h, c_int32_t))
    if (present(ierr)) ierr = int(rc)
  end subroutine

  subroutine perfmark_region_exit(h, ierr)
    integer, intent(in) :: h
    integer, intent(out), optional :: ierr
    integer(c_int) :: rc
    rc = pm_c_exit(int(h, c_int32_t))
    if (present(ierr)) ierr = int(rc)
  end subroutine

  logical function perfmark_active()
    perfmark_active = pm_c_active() /= 0
  end function

end module perfmark
