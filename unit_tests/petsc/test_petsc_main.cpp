// GoogleTest under MPI: every rank runs every test (the tests are
// collective); only rank 0 prints, and the exit code is the same on every
// rank (failed anywhere = failed).
#include <petscsys.h>

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (PetscInitialize(&argc, &argv, nullptr, nullptr) != 0) return 1;
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS();
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD);
  if (PetscFinalize() != 0) return 1;
  return worst;
}
