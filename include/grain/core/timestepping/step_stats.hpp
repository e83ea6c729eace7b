// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include <grain/core/math/types.hpp>

namespace grain {

/// The named stages of one Moreau step, in execution order (docs/architecture.md).
enum class Stage : std::uint8_t {
  FirstHalfStep,       ///< q^M = q^S + dt/2 F(q^S) u^S
  Exchange,            ///< BodyExchange::exchangeBodies (bodies migrate in MPI runs)
  CollisionDetection,  ///< contacts with g_N(q^M) <= 0
  /// The contact ordering between detection and solve: distributed, the split-body plan and
  /// the split bodies' contacts first; with more than one thread, the colouring. The name is
  /// kept as a SimData.dat column (ContactGraphTime [s]).
  ContactGraph,
  Forces,          ///< free velocity u^S + M^-1 h dt at (q^M, u^S, t^M)
  ContactSolve,    ///< prox iteration for u^E and P
  SecondHalfStep,  ///< q^E = q^S + dt F(q^M) (u^S + u^E)/2
  Count
};

std::string_view toString(Stage s);

/// Statistics of one step, written to SimData.dat.
struct StepStats {
  Real time = 0.0;         ///< t^E (s)
  std::uint64_t step = 0;  ///< number of this step, from 1
  std::size_t contacts = 0;
  std::uint32_t iterations = 0;
  /// 1 if the step's PQN did not reach the tolerance and fell back to SOR prox (matrix-free: the
  /// velocity SOR, the same on every process; assembled: the Delassus SOR), else 0. SimData.dat
  /// column Fallbacks; the run summary counts the steps.
  std::uint32_t fallbacks = 0;
  bool converged = true;
  bool finite = true;
  /// Accuracy of the contact solver's final iterate: LocalErrorMeasure NaturalMap and Koziara of
  /// the step's local problem (0 for steps without contacts).
  Real naturalMapError = 0.0;
  Real koziaraError = 0.0;
  Real maxPenetration = 0.0;    ///< max(-g_N) over contacts at q^M (m), 0 if none
  Real kineticEnergy = 0.0;     ///< at t^E (J)
  Real rotationalEnergy = 0.0;  ///< rotational part of kineticEnergy (J)
  Real potentialEnergy = 0.0;   ///< at t^E (J)
  std::array<double, static_cast<std::size_t>(Stage::Count)>
      stageSeconds{};        ///< wall time per stage
  double stepSeconds = 0.0;  ///< wall time of the whole step
  /// Distributed runs: bytes and messages sent by all processes in the step (0 when serial).
  std::uint64_t bytesSent = 0;
  std::uint64_t messagesSent = 0;
};

}  // namespace grain
