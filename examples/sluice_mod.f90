! Fortran bindings (iso_c_binding) of the checkpoint calls of Sluice's C
! API (sluice.h, sluice/c_mpi.h). Names, arguments and return codes are the
! C ones; strings passed to Sluice end with c_null_char (sluice_cstr adds
! it), handles are type(c_ptr), buffers are passed with c_loc.
module sluice
  use iso_c_binding
  implicit none

  integer(c_int), parameter :: SLUICE_OK = 0, SLUICE_NOT_FOUND = 1
  integer(c_int64_t), parameter :: SLUICE_DATASET_ID_HIGHEST = -1_c_int64_t
  integer(c_int64_t), parameter :: SLUICE_DATASET_ID_NEWEST = -2_c_int64_t
  integer(c_int), parameter :: SLUICE_DATASET_READ = 1
  integer(c_int), parameter :: SLUICE_DATASET_WRITE = 2
  integer(c_int), parameter :: SLUICE_ELEMENT_SHARED = 0
  integer(c_int), parameter :: SLUICE_ELEMENT_UNIQUE = 1

  interface
    ! A context over the ranks of an MPI communicator (an integer, as
    ! Fortran's MPI gives it). Collective.
    integer(c_int) function sluice_init_mpi_f(comm, name, config_file, ctx) &
        bind(C, name="sluice_init_mpi_f")
      import :: c_int, c_char, c_ptr
      integer(c_int), value :: comm
      character(kind=c_char), dimension(*) :: name
      type(c_ptr), value :: config_file  ! c_null_ptr for none
      type(c_ptr) :: ctx
    end function
    integer(c_int) function sluice_fini(ctx) bind(C, name="sluice_fini")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
    end function
    integer(c_int) function sluice_dataset_open(ctx, name, id, flags, ds) &
        bind(C, name="sluice_dataset_open")
      import :: c_int, c_char, c_ptr, c_int64_t
      type(c_ptr), value :: ctx
      character(kind=c_char), dimension(*) :: name
      integer(c_int64_t), value :: id
      integer(c_int), value :: flags
      type(c_ptr) :: ds
    end function
    ! The id opened (HIGHEST and NEWEST resolved), into id.
    integer(c_int) function sluice_dataset_id(ds, id) &
        bind(C, name="sluice_dataset_id")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: ds
      integer(c_int64_t) :: id
    end function
    integer(c_int) function sluice_dataset_close(ds) &
        bind(C, name="sluice_dataset_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: ds
    end function
    integer(c_int) function sluice_dataset_unlink(ctx, name, id) &
        bind(C, name="sluice_dataset_unlink")
      import :: c_int, c_char, c_ptr, c_int64_t
      type(c_ptr), value :: ctx
      character(kind=c_char), dimension(*) :: name
      integer(c_int64_t), value :: id
    end function
    integer(c_int) function sluice_element_open(ds, name, kind, el) &
        bind(C, name="sluice_element_open")
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: ds
      character(kind=c_char), dimension(*) :: name
      integer(c_int), value :: kind
      type(c_ptr) :: el
    end function
    integer(c_int) function sluice_element_open_rank(ds, name, rank, el) &
        bind(C, name="sluice_element_open_rank")
      import :: c_int, c_char, c_ptr
      type(c_ptr), value :: ds
      character(kind=c_char), dimension(*) :: name
      integer(c_int), value :: rank
      type(c_ptr) :: el
    end function
    integer(c_int) function sluice_element_close(el) &
        bind(C, name="sluice_element_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: el
    end function
    integer(c_int) function sluice_element_write(el, offset, buf, n) &
        bind(C, name="sluice_element_write")
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: el
      integer(c_int64_t), value :: offset
      type(c_ptr), value :: buf
      integer(c_size_t), value :: n
    end function
    integer(c_int) function sluice_element_read(el, offset, buf, n, got) &
        bind(C, name="sluice_element_read")
      import :: c_int, c_ptr, c_int64_t, c_size_t
      type(c_ptr), value :: el
      integer(c_int64_t), value :: offset
      type(c_ptr), value :: buf
      integer(c_size_t), value :: n
      integer(c_size_t) :: got
    end function
    type(c_ptr) function sluice_errmsg_c() bind(C, name="sluice_errmsg")
      import :: c_ptr
    end function
    type(c_ptr) function sluice_version_c() bind(C, name="sluice_version")
      import :: c_ptr
    end function
    integer(c_size_t) function strlen_c(s) bind(C, name="strlen")
      import :: c_size_t, c_ptr
      type(c_ptr), value :: s
    end function
  end interface

contains

  ! `s` without trailing blanks, ending with c_null_char.
  function sluice_cstr(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s) // c_null_char
  end function

  ! The calling thread's last error message.
  function sluice_errmsg() result(msg)
    character(len=:), allocatable :: msg
    msg = sluice_fstr(sluice_errmsg_c())
  end function

  ! The library's version ("MAJOR.MINOR.PATCH").
  function sluice_version() result(v)
    character(len=:), allocatable :: v
    v = sluice_fstr(sluice_version_c())
  end function

  ! A Fortran copy of the C string at p.
  function sluice_fstr(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    n = int(strlen_c(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

end module sluice
