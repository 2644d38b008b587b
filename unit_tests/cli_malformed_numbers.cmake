# Malformed numbers and values out of range are refused before anything
# runs, with exit code 2 and a message naming the option and what it
# wants. EXE: the kspmv program.
include(${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake)

expect_refused("--reps: must be a positive integer, not 'abc'" spmv lap1d:10 --format csr --reps abc)
expect_refused("--reps: must be a positive integer, not '1.5'" spmv lap1d:10 --format csr --reps 1.5)
expect_refused("--reps: must be a positive integer, not '0'" spmv lap1d:10 --format csr --reps=0)
expect_refused("--reps: must be a positive integer, not '-3'" spmv lap1d:10 --format csr --reps=-3)
expect_refused("--reps: must be a positive integer, not '99999999999'" spmv lap1d:10 --format csr --reps 99999999999)
expect_refused("--vector-length: must be a positive integer" spmv lap1d:10 --format csr --vector-length 2x)
expect_refused("--seed: must be an integer >= 0, not '-1'" spmv lap1d:10 --format csr --seed -1)
expect_refused("--alpha: must be a number, not '1x'" spmv lap1d:10 --format csr --alpha 1x)
expect_refused("--beta: must be a number, not 'nan'" spmv lap1d:10 --format csr --beta nan)
expect_refused("--precision: half not in {double,float}" spmv lap1d:10 --format csr --precision half)
expect_refused("--fractiles: must be a positive integer, not '0'" info lap1d:10 --fractiles 0)
expect_refused("--budget: must be a number >= 0, not '-1'" calibrate --budget=-1)
expect_refused("--scale: must be a positive number, not 'abc'" calibrate --scale abc)
# A value missing at the end of the line.
expect_refused("--reps" spmv lap1d:10 --format csr --reps)
