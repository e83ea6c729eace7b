// SPDX-License-Identifier: MIT
#pragma once

#include <span>

#include <grain/core/bodies/body_storage.hpp>

namespace grain {

/// The points at which a distributed run exchanges data with other processes during a step
/// (thesis §9.2): after the first half step (bodies move, migrate, get remote copies), every
/// few solver sweeps (velocities of split bodies are averaged) and at the convergence decision.
///
/// The core never depends on MPI: the MPI layer implements this interface; a serial run uses
/// NullExchange, whose calls do nothing. The solver calls it at most once per sweep, never per
/// contact.
class VelocityExchange {
 public:
  virtual ~VelocityExchange() = default;
  /// After the first half step, before collision detection: bodies may be added or removed.
  virtual void afterFirstHalfStep(BodyStorage& bodies) = 0;
  /// Every how many sweeps exchangeSplitVelocities() is called (0: never).
  virtual unsigned splitExchangePeriod() const = 0;
  /// Averages the velocities of bodies split over several processes.
  virtual void exchangeSplitVelocities(BodyStorage& bodies) = 0;
  /// Combines the local convergence flag with the other processes' flags.
  virtual bool reduceConverged(bool localConverged) = 0;
  /// Replaces every entry of `sums` by its sum over all processes (in place, same order on every
  /// process). The solver's accuracy measures (NaturalMap, Koziara) use it for their global
  /// norms, once per evaluation. The default does nothing, which is right for a single process.
  virtual void reduceSums(std::span<Real> sums) { static_cast<void>(sums); }
};

/// Serial implementation: no communication.
class NullExchange final : public VelocityExchange {
 public:
  void afterFirstHalfStep(BodyStorage&) override {}
  unsigned splitExchangePeriod() const override { return 0; }
  void exchangeSplitVelocities(BodyStorage&) override {}
  bool reduceConverged(bool localConverged) override { return localConverged; }
};

}  // namespace grain
