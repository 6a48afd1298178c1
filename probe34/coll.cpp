// Time of one gather of a few doubles from every rank, several ways.
#include <mpi.h>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
int main(int argc, char** argv) {
  int level;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int per = 30, reps = 20000;
  std::vector<int> counts(size, per), offs(size);
  for (int r = 0; r < size; ++r) offs[r] = r * per;
  std::vector<double> all(size * per, 1.0);
  for (int mode = 0; mode < 5; ++mode) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) {
      if (mode == 0 || mode == 1) {
        MPI_Request req;
        MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), counts.data(), offs.data(), MPI_DOUBLE, MPI_COMM_WORLD, &req);
        int flag = 0;
        while (!flag) { MPI_Test(&req, &flag, MPI_STATUS_IGNORE); if (mode == 0 && !flag) std::this_thread::yield(); }
      } else if (mode == 2) {
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), counts.data(), offs.data(), MPI_DOUBLE, MPI_COMM_WORLD);
      } else if (mode == 3) {
        double x = rank, y;
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      } else {
        MPI_Request req;
        double x = rank, y;
        MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &req);
        int flag = 0;
        while (!flag) { MPI_Test(&req, &flag, MPI_STATUS_IGNORE); if (!flag) std::this_thread::yield(); }
      }
    }
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
    const char* names[] = {"Iallgatherv+Test+yield", "Iallgatherv+Test spin", "Allgatherv", "Allreduce 1", "Iallreduce 1+yield"};
    if (rank == 0) std::printf("%d ranks %-24s %.2f us\n", size, names[mode], us);
  }
  MPI_Finalize();
}
