// SPDX-License-Identifier: MIT
// Runs one Siconos FC3D (or FC2D) solver on a Siconos .dat problem and reports
//   iterations seconds siconos_error info
// on stdout; writes the reactions r (one value per line) to OUT. Used by run.py to compare
// grain's local solvers with Siconos side by side (Debian's libsiconos-numerics-dev).
// With REPEAT > 1 the problem is solved REPEAT times from r = 0 in this process and the
// reported time is the minimum (STAT min, default) or the mean (STAT mean) over the solves, as
// grain-fclib's --repeat / --repeat-stat do.
//
//   siconos_solve FILE.dat nsgs|prox|nsn-ac|vi-eg TOL MAXITER OUT [REPEAT [min|mean]]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "FrictionContactProblem.h"
#include "Friction_cst.h"
#include "NonSmoothDrivers.h"
#include "SolverOptions.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 6 || argc > 8) {
    fprintf(stderr, "usage: %s FILE.dat nsgs|prox|nsn-ac|vi-eg TOL MAXITER OUT [REPEAT [min|mean]]\n",
            argv[0]);
    return 1;
  }
  const int repeat = argc > 6 ? atoi(argv[6]) : 1;
  const int mean = argc > 7 && strcmp(argv[7], "mean") == 0;
  if (repeat < 1 || (argc > 7 && !mean && strcmp(argv[7], "min") != 0)) {
    fprintf(stderr, "REPEAT must be >= 1 and STAT min or mean\n");
    return 1;
  }
  FrictionContactProblem* problem = frictionContact_new_from_filename(argv[1]);
  if (problem == NULL) {
    fprintf(stderr, "%s: cannot read the problem\n", argv[1]);
    return 1;
  }
  const int dim = problem->dimension;
  const int n = problem->numberOfContacts * dim;
  int id;
  if (dim == 2) {
    id = SICONOS_FRICTION_2D_NSGS;  // the only generic FC2D solver
  } else if (strcmp(argv[2], "nsgs") == 0) {
    id = SICONOS_FRICTION_3D_NSGS;
  } else if (strcmp(argv[2], "prox") == 0) {
    id = SICONOS_FRICTION_3D_PROX;
  } else if (strcmp(argv[2], "nsn-ac") == 0) {
    id = SICONOS_FRICTION_3D_NSN_AC;
  } else if (strcmp(argv[2], "vi-eg") == 0) {
    id = SICONOS_FRICTION_3D_VI_EG;
  } else {
    fprintf(stderr, "unknown solver %s\n", argv[2]);
    return 1;
  }
  SolverOptions* options = solver_options_create(id);
  options->dparam[SICONOS_DPARAM_TOL] = atof(argv[3]);
  options->iparam[SICONOS_IPARAM_MAX_ITER] = atoi(argv[4]);
  double* r = calloc((size_t)n, sizeof(double));
  double* u = calloc((size_t)n, sizeof(double));
  int info = 0;
  double best = 0.0;
  double sum = 0.0;
  for (int k = 0; k < repeat; ++k) {
    for (int i = 0; i < n; ++i) {
      r[i] = 0.0;
      u[i] = 0.0;
    }
    const double start = now();
    info = dim == 2 ? fc2d_driver(problem, r, u, options) : fc3d_driver(problem, r, u, options);
    const double t = now() - start;
    best = k == 0 || t < best ? t : best;
    sum += t;
  }
  const double seconds = mean ? sum / repeat : best;
  printf("%d %.6g %.6e %d\n", options->iparam[SICONOS_IPARAM_ITER_DONE], seconds,
         options->dparam[SICONOS_DPARAM_RESIDU], info);
  FILE* out = fopen(argv[5], "w");
  if (out == NULL) {
    fprintf(stderr, "%s: cannot create the file\n", argv[5]);
    return 1;
  }
  for (int i = 0; i < n; ++i) {
    fprintf(out, "%.17g\n", r[i]);
  }
  fclose(out);
  free(r);
  free(u);
  solver_options_delete(options);
  frictionContactProblem_free(problem);
  return 0;
}
