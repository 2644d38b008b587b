# An option of another kspmv command is refused before anything runs, with
# exit code 2 and a message that names the option and the command it
# belongs to. EXE: the kspmv program; WORK: a scratch folder.
file(MAKE_DIRECTORY ${WORK})
file(REMOVE ${WORK}/out.mtx)

include(${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake)

# --reps is spmv's; both spellings of the value.
expect_refused("unexpected arguments for `kspmv convert`: --reps 5.*--reps is an option of `kspmv spmv`"
               convert lap3d:4 ${WORK}/out.mtx --reps 5)
expect_refused("--reps is an option of `kspmv spmv`" convert lap3d:4 ${WORK}/out.mtx --reps=5)
if(EXISTS ${WORK}/out.mtx)
  message(FATAL_ERROR "convert ran although its command line was refused")
endif()
# calibrate's options on info; info's on spmv; an option of several commands.
expect_refused("--out is an option of `kspmv calibrate`.*--budget is an option of `kspmv calibrate`"
               info lap1d:10 --out x.cal --budget 3)
expect_refused("--fractiles is an option of `kspmv info`" spmv lap1d:10 --format csr --fractiles 4)
expect_refused("--format is an option of `kspmv info`, `kspmv spmv`" formats --format csr)
# Too many positional arguments, an unknown command.
expect_refused("unexpected argument for `kspmv convert`: extra" convert lap1d:10 ${WORK}/out.mtx extra)
expect_refused("unexpected argument: bogus" bogus)
