! The Fortran twin of checkpoint_sim.c: an MPI "simulation" of one global
! array of integers, split in blocks over the ranks, that checkpoints it
! through Sluice (a shared element; the step in rank 0's unique element)
! and restarts from its highest committed checkpoint, on any number of
! ranks.
!
!   mpiexec -n 4 checkpoint_sim_f DATA_ROOT STEPS [EVERY]
!
! Prints a checksum of the final state that does not depend on the number
! of ranks or on restarts.
program checkpoint_sim_f
  use iso_c_binding
  use mpi
  use sluice
  implicit none

  integer(c_int64_t), parameter :: G = 50000
  integer :: ierr, rank, nranks, i
  integer(c_int) :: rc
  integer(c_int64_t) :: lo, hi, n, step, steps, every, id
  integer(c_int64_t), allocatable, target :: a(:)
  integer(c_int64_t), target :: meta(2)
  integer(c_int64_t) :: total, mine
  character(len=4096) :: arg
  type(c_ptr) :: ctx, ds, el
  integer(c_size_t) :: got

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (command_argument_count() < 2) then
    if (rank == 0) print '(a)', 'usage: checkpoint_sim_f DATA_ROOT STEPS [EVERY]'
    call MPI_Finalize(ierr)
    stop 2
  end if
  call get_command_argument(1, arg)
  ! A configuration file could say the same; the environment is what a
  ! job script sets.
  call setenv_data_roots(trim(arg))
  call get_command_argument(2, arg)
  read (arg, *) steps
  every = 5
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg)
    read (arg, *) every
  end if

  rc = sluice_init_mpi_f(MPI_COMM_WORLD, sluice_cstr('checkpoint_sim_f'), &
                         c_null_ptr, ctx)
  call check(rc, 'init')
  if (rank == 0) print '(2a)', 'checkpoint_sim_f with Sluice ', sluice_version()
  lo = G * rank / nranks
  hi = G * (rank + 1) / nranks
  n = hi - lo
  allocate(a(n))

  ! Restart from the highest committed checkpoint, if any.
  step = 0
  rc = sluice_dataset_open(ctx, sluice_cstr('state'), &
                           SLUICE_DATASET_ID_HIGHEST, SLUICE_DATASET_READ, ds)
  if (rc == SLUICE_OK) then
    call check(sluice_dataset_id(ds, id), 'the id opened')
    call check(sluice_element_open_rank(ds, sluice_cstr('meta'), 0, el), 'meta')
    call check(sluice_element_read(el, 0_c_int64_t, c_loc(meta), &
                                   int(16, c_size_t), got), 'read meta')
    call check(sluice_element_close(el), 'close meta')
    call check(sluice_element_open(ds, sluice_cstr('a'), &
                                   SLUICE_ELEMENT_SHARED, el), 'open a')
    call check(sluice_element_read(el, lo * 8, c_loc(a), &
                                   int(n * 8, c_size_t), got), 'read a')
    call check(sluice_element_close(el), 'close a')
    call check(sluice_dataset_close(ds), 'close')
    step = meta(1)
    if (id /= step) then  ! each checkpoint's id is its step
      print '(a,i0,a,i0)', 'checkpoint ', id, ' holds step ', step
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
    if (rank == 0) print '(a,i0)', 'restart from checkpoint ', step
  else if (rc == SLUICE_NOT_FOUND) then
    do i = 1, int(n)
      a(i) = mod(lo + i, 1000_c_int64_t)
    end do
    if (rank == 0) print '(a)', 'fresh start'
  else
    call check(rc, 'open the highest checkpoint')
  end if

  do while (step < steps)
    step = step + 1
    do i = 1, int(n)
      a(i) = mod(a(i) * 31 + step + lo + i, 1000003_c_int64_t)
    end do
    if (mod(step, every) == 0) then
      call check(sluice_dataset_open(ctx, sluice_cstr('state'), step, &
                                     SLUICE_DATASET_WRITE, ds), 'open')
      call check(sluice_element_open(ds, sluice_cstr('a'), &
                                     SLUICE_ELEMENT_SHARED, el), 'open a')
      call check(sluice_element_write(el, lo * 8, c_loc(a), &
                                      int(n * 8, c_size_t)), 'write a')
      call check(sluice_element_close(el), 'close a')
      if (rank == 0) then
        meta(1) = step
        meta(2) = G
        call check(sluice_element_open(ds, sluice_cstr('meta'), &
                                       SLUICE_ELEMENT_UNIQUE, el), 'open meta')
        call check(sluice_element_write(el, 0_c_int64_t, c_loc(meta), &
                                        int(16, c_size_t)), 'write meta')
        call check(sluice_element_close(el), 'close meta')
      end if
      call check(sluice_dataset_close(ds), 'commit')
      if (rank == 0) print '(a,i0,a)', 'checkpoint ', step, ' committed'
    end if
  end do

  mine = 0
  do i = 1, int(n)
    mine = mine + a(i) * (lo + i)
  end do
  call MPI_Reduce(mine, total, 1, MPI_INTEGER8, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0)', 'final checksum ', total, &
                                     ' after step ', step
  call check(sluice_fini(ctx), 'fini')
  call MPI_Finalize(ierr)

contains

  subroutine check(code, what)
    integer(c_int), intent(in) :: code
    character(len=*), intent(in) :: what
    integer :: e
    if (code /= SLUICE_OK) then
      print '(a,i0,4a)', 'rank ', rank, ': ', what, ': ', sluice_errmsg()
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine

  subroutine setenv_data_roots(value)
    character(len=*), intent(in) :: value
    interface
      integer(c_int) function setenv_c(name, val, overwrite) bind(C, name="setenv")
        import :: c_int, c_char
        character(kind=c_char), dimension(*) :: name, val
        integer(c_int), value :: overwrite
      end function
    end interface
    integer(c_int) :: r
    r = setenv_c(sluice_cstr('SLUICE_DATA_ROOTS'), sluice_cstr(value), 1_c_int)
  end subroutine

end program
