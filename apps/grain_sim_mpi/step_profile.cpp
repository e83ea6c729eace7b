// SPDX-License-Identifier: MIT
#include "step_profile.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace grain::app {

void StepProfile::beginStep() {
  rebuild_ = 0.0;
  rebuildTraffic_ = 0.0;
  rebuildCollective_ = 0.0;
  std::fill(std::begin(rebuildCounts_), std::end(rebuildCounts_), 0.0);
  stepStart_ = MPI_Wtime();
}

void StepProfile::beginRebuild(const mpi::TrafficCounters& traffic) {
  atRebuild_ = traffic;
  rebuildStart_ = MPI_Wtime();
}

void StepProfile::endRebuild(const mpi::TrafficCounters& traffic, bool rebuilt,
                             std::size_t migrated) {
  rebuild_ += MPI_Wtime() - rebuildStart_;
  rebuildTraffic_ += traffic.seconds - atRebuild_.seconds;
  rebuildCollective_ += traffic.collectiveSeconds - atRebuild_.collectiveSeconds;
  const double messages = static_cast<double>(traffic.messages - atRebuild_.messages);
  const double bytes = static_cast<double>(traffic.bytes - atRebuild_.bytes);
  rebuildCounts_[kMessages] += messages;
  rebuildCounts_[kBytes] += bytes;
  rebuildCounts_[kReductions] += static_cast<double>(traffic.reductions - atRebuild_.reductions);
  if (rebuilt) {
    migrations_ += 1.0;
    migrationMessages_ += messages;
    migrationBytes_ += bytes;
    mostMigrationMessages_ = std::max(mostMigrationMessages_, messages);
    migratedBodies_ += static_cast<double>(migrated);
  }
}

void StepProfile::endStep(const mpi::TrafficCounters& traffic) {
  double part[kPartCount];
  part[kStep] = MPI_Wtime() - stepStart_;
  part[kCollectives] = traffic.collectiveSeconds - rebuildCollective_;
  part[kExchange] =
      traffic.seconds - traffic.collectiveSeconds - (rebuildTraffic_ - rebuildCollective_);
  part[kRebuild] = rebuild_;
  part[kCompute] = part[kStep] - part[kExchange] - part[kCollectives] - part[kRebuild];
  double* into = steps_ == 0 ? first_ : total_;
  for (int k = 0; k < kPartCount; ++k) {
    into[k] += part[k];
  }
  if (steps_ > 0) {
    shortest_ = steps_ == 1 ? part[kStep] : std::min(shortest_, part[kStep]);
    longest_ = std::max(longest_, part[kStep]);
    counts_[kMessages] += static_cast<double>(traffic.messages) - rebuildCounts_[kMessages];
    counts_[kBytes] += static_cast<double>(traffic.bytes) - rebuildCounts_[kBytes];
    counts_[kReductions] += static_cast<double>(traffic.reductions) - rebuildCounts_[kReductions];
  }
  ++steps_;
}

std::string StepProfile::summary(MPI_Comm comm, std::uint64_t stepsBefore) const {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // Per step of the steps after the first; with a single step, that step.
  const bool onlyFirst = steps_ <= 1;
  // The parts, the first step's time, then the counts (steps after the first only), then the
  // migrations' counts.
  constexpr int kFirstCount = kPartCount + 1;
  constexpr int kFirstMigration = kFirstCount + kCounts;
  constexpr int kFirstExtreme = kFirstMigration + 5;
  constexpr int kValues = kFirstExtreme + 3;
  double mine[kValues];
  for (int k = 0; k < kPartCount; ++k) {
    mine[k] = onlyFirst ? first_[k] : total_[k] / static_cast<double>(steps_ - 1);
  }
  mine[kPartCount] = first_[kStep];
  for (int k = 0; k < kCounts; ++k) {
    mine[kFirstCount + k] = onlyFirst ? 0.0 : counts_[k] / static_cast<double>(steps_ - 1);
  }
  mine[kFirstMigration] = migrations_;
  mine[kFirstMigration + 1] = migrationMessages_;
  mine[kFirstMigration + 2] = migrationBytes_;
  mine[kFirstMigration + 3] = mostMigrationMessages_;
  mine[kFirstMigration + 4] = migratedBodies_;
  // The longest step, and the shortest step and the least compute negated: the maximum of a
  // negated value is the negated minimum.
  mine[kFirstExtreme] = longest_;
  mine[kFirstExtreme + 1] = -shortest_;
  mine[kFirstExtreme + 2] = -mine[kCompute];
  // Reductions over all processes (no array over the processes). Allreduces, though only the
  // first process prints: SimGrid 3.32's reduce trees abort on some counts and process numbers
  // ("Actor pid=-1 is gone" on one process), its allreduces do not.
  double maximum[kValues] = {};
  double mean[kValues] = {};
  MPI_Allreduce(mine, maximum, kValues, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(mine, mean, kValues, MPI_DOUBLE, MPI_SUM, comm);
  // Which processes computed most and least (the lowest rank of equal ones): where a step's
  // waiting comes from.
  const double least = -maximum[kFirstExtreme + 2];
  int holder[2] = {mine[kCompute] == maximum[kCompute] ? rank : size,
                   mine[kCompute] == least ? rank : size};
  MPI_Allreduce(MPI_IN_PLACE, holder, 2, MPI_INT, MPI_MIN, comm);
  if (rank != 0 || steps_ == 0) {
    return {};
  }
  // Messages and bytes of all processes, reductions of the process that made most.
  const double messages = mean[kFirstCount + kMessages];
  const double bytes = mean[kFirstCount + kBytes];
  const double reductions = maximum[kFirstCount + kReductions];
  const double migrations = maximum[kFirstMigration];  // the same on every process
  const double migrationMessages = mean[kFirstMigration + 1];
  const double migrationBytes = mean[kFirstMigration + 2];
  const double mostMigrationMessages = maximum[kFirstMigration + 3];
  const double migratedBodies = mean[kFirstMigration + 4];
  for (double& v : mean) {
    v /= size;
  }
  // The run's first step and its last, in the step numbers of the run (a restart continues them).
  const auto first = static_cast<unsigned long long>(stepsBefore + 1);
  const auto last = static_cast<unsigned long long>(stepsBefore + steps_);
  char steps[96];
  if (onlyFirst) {
    std::snprintf(steps, sizeof steps, "step %llu", first);
  } else {
    std::snprintf(steps, sizeof steps, "steps %llu-%llu; step %llu: %.6f s", first + 1, last, first,
                  maximum[kPartCount]);
  }
  std::string text;
  char line[256];
  const char* over[2] = {"max", "mean"};
  const double* value[2] = {maximum, mean};
  for (int i = 0; i < 2; ++i) {
    std::snprintf(line, sizeof line,
                  "profile    s/step %.6f (%s over processes) compute %.6f exchange %.6f "
                  "collectives %.6f rebuild %.6f%s%s%s\n",
                  value[i][kStep], over[i], value[i][kCompute], value[i][kExchange],
                  value[i][kCollectives], value[i][kRebuild], i == 0 ? " (MPI_Wtime, " : "",
                  i == 0 ? steps : "", i == 0 ? ")" : "");
    text += line;
  }
  std::snprintf(line, sizeof line,
                "profile    compute most on process %d (%.6f s/step), least on process %d "
                "(%.6f s/step)",
                holder[0], maximum[kCompute], holder[1], least);
  text += line;
  if (!onlyFirst) {
    std::snprintf(line, sizeof line, "; steps from %.6f to %.6f s", -maximum[kFirstExtreme + 1],
                  maximum[kFirstExtreme]);
    text += line;
  }
  text += '\n';
  if (!onlyFirst) {
    std::snprintf(line, sizeof line,
                  "traffic    per step: messages %.1f bytes %.0f (sum over processes) reductions "
                  "%.1f (max over processes) (steps %llu-%llu)\n",
                  messages, bytes, reductions, first + 1, last);
    text += line;
  }
  if (migrations > 0.0) {
    std::snprintf(line, sizeof line,
                  "rebuilds   per rebuild: messages %.1f bytes %.0f bodies moved %.1f (sum over "
                  "processes), at most %.0f messages from one process (%.0f rebuilds)\n",
                  migrationMessages / migrations, migrationBytes / migrations,
                  migratedBodies / migrations, mostMigrationMessages, migrations);
    text += line;
  }
  return text;
}

}  // namespace grain::app
