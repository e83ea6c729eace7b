// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/contact/contact_storage.hpp>
#include <grain/core/math/types.hpp>
#include <grain/core/solvers/solver_data.hpp>

/// The seams through which a distributed run plugs into the serial core (thesis ch. 9, 12, 13).
///
/// The core never depends on MPI: the MPI layer (grain_mpi) implements these interfaces; a serial
/// run passes none (null pointers in StepExchanges). Three narrow jobs, each called at a fixed
/// point of the step:
///   - BodyExchange, at the step boundary: after the first half step bodies migrate and remote
///     copies are refreshed; after collision detection every contact is kept by exactly one
///     process.
///   - SplitBodyExchange, inside the contact solve: bodies with contacts on several processes are
///     split into copies with weighted mass (mass splitting); their velocities are averaged on
///     the solver's own arrays every period() sweeps. The matrix-free solvers keep the whole
///     masses instead and add the copies' impulses (sum()) in every Delassus product.
///   - Reducer: sums and logical reductions (convergence flags, accuracy measures, statistics).
///
/// Warm start (usePercussionCache) travels through the same two calls: exchangeBodies() takes the
/// cache of the contacts this process solved in the previous step, planSplits() gives back the
/// cache entries of every contact this process may solve now, wherever they were solved before.
/// A distributed step passes both exchanges or neither.
///
/// Collective calls line up: whenever a process makes a call that communicates, every process
/// it communicates with makes the same call. The stepper and the solver guarantee this by
/// calling planSplits() and beginSolve() on every step, contacts or not, and by taking every
/// convergence decision of coupled processes together (see ContactSolver). A step makes one
/// reduction over all processes, at its end (reduceStats): the statistics, the convergence after
/// the last allowed sweep and the accuracy measures of the final iterate travel in it.
namespace grain {

struct DynamicsSystem;

/// Sums and logical reductions over a set of processes.
class Reducer {
 public:
  virtual ~Reducer() = default;
  /// True if the reduction spans more than one process.
  virtual bool distributed() const = 0;
  /// Logical AND of `local` over the processes.
  virtual bool allTrue(bool local) = 0;
  /// Replaces every entry of `values` by its sum over the processes (in place; the same length
  /// and order on every process).
  virtual void sum(std::span<Real> values) = 0;
  /// Replaces every entry of `values` by its maximum over the processes.
  virtual void max(std::span<Real> values) = 0;
  /// sum(sums) and max(maxima) together: one reduction where the implementation can (the
  /// statistics at the end of a step).
  virtual void sumAndMax(std::span<Real> sums, std::span<Real> maxima) {
    sum(sums);
    max(maxima);
  }
};

/// Serial reducer: every reduction is the identity.
class LocalReducer final : public Reducer {
 public:
  bool distributed() const override { return false; }
  bool allTrue(bool local) override { return local; }
  void sum(std::span<Real>) override {}
  void max(std::span<Real>) override {}
};

/// Body communication at the step boundary (thesis §12.2).
class BodyExchange {
 public:
  virtual ~BodyExchange() = default;
  /// After the first half step, before collision detection: local bodies whose centre left this
  /// process's domain change owner, remote copies are created, updated or removed. Bodies carry
  /// their step-start state (BodyStorage). The stepper restores id order afterwards.
  /// `warmStart`: the warm-start entries of the contacts this process solved in the previous step
  /// (empty without usePercussionCache); the exchange takes them over (leaves the vector empty)
  /// and hands them back, routed to the processes that now hold the pairs' bodies, in planSplits().
  virtual void exchangeBodies(DynamicsSystem& system,
                              std::vector<detail::PercussionCacheEntry>& warmStart) = 0;
  /// After collision detection: removes the contacts that another process solves, so that every
  /// contact is solved by exactly one process. Must keep the order of the remaining contacts.
  virtual void selectContacts(const BodyStorage& bodies, ContactStorage& contacts) = 0;
};

/// Mass splitting (thesis ch. 13): a simulated body with contacts on p > 1 processes is solved
/// as p copies with mass M/p and inertia Theta/p, whose velocities are averaged (the exact
/// solution of the bilateral constraints that glue the copies, thesis eq. 13.43).
class SplitBodyExchange {
 public:
  virtual ~SplitBodyExchange() = default;
  /// After contact selection, on every process and every step: decides with the neighbours
  /// which bodies are split. Fills `multiplicity` (one entry per BodyStorage index): the number of
  /// processes that share body i in this step's solve (1: not split). A body with multiplicity >
  /// 1 takes part in this process's solve even without a contact here.
  /// `warmStart` is replaced by the warm-start entries of every contact pair whose body is held
  /// here (see BodyExchange::exchangeBodies), sorted as ContactSolver::percussionCache().
  virtual void planSplits(const BodyStorage& bodies, const ContactStorage& contacts,
                          std::vector<std::uint32_t>& multiplicity,
                          std::vector<detail::PercussionCacheEntry>& warmStart) = 0;
  /// Once per solve, before the first sweep, without communication: the BodyStorage index of
  /// every solver body, in solver order. Returns true if this process shares split bodies with
  /// others in this solve ("coupled"): then average() and coupledReducer() calls follow (the
  /// velocity prox solver), or sum() calls (the matrix-free solvers).
  virtual bool beginSolve(const BodyStorage& bodies,
                          std::span<const std::uint32_t> storageIndex) = 0;
  /// Sweeps between two averaging exchanges (splitNodeUpdateRatio, >= 1).
  virtual unsigned period() const = 0;
  /// Averaging exchanges between two convergence checks (convergenceCheckRatio, >= 1).
  virtual unsigned checkRatio() const = 0;
  /// Replaces the velocities of the split bodies by the mean over their copies: `velocity` (I,
  /// m/s) and `omega` (I, rad/s) are the solver's arrays, indexed as in beginSolve().
  virtual void average(std::span<Vec3> velocity, std::span<Vec3> omega) = 0;
  /// Replaces the entries of the split bodies by their sum over the copies (the same partners and
  /// messages as average(), one sum in holder rank order, so every copy gets the same bits): the
  /// body-sum stage of a matrix-free Delassus product (DelassusOperator) and of its final
  /// velocity update. `linear` (I, N s) and `angular` (I, N m s) are indexed as in beginSolve().
  virtual void sum(std::span<Vec3> linear, std::span<Vec3> angular) = 0;
  /// average() in two halves, so that a solve can sweep the contacts that touch no split body
  /// while the messages travel: startAverage() sends this process's copies of the split bodies
  /// (their velocities final for this sweep), finishAverage() receives the others' copies and
  /// replaces every split body's velocities by the mean, exactly as average() does. The split
  /// bodies' velocities must not change in between. By default the work is all in
  /// finishAverage().
  virtual void startAverage(std::span<const Vec3> /*velocity*/, std::span<const Vec3> /*omega*/) {}
  virtual void finishAverage(std::span<Vec3> velocity, std::span<Vec3> omega) {
    average(velocity, omega);
  }
  /// Reductions among the coupled processes (convergence decisions, accuracy measures).
  virtual Reducer& coupledReducer() = 0;
};

/// What a distributed step communicates through; all null in a serial run.
struct StepExchanges {
  BodyExchange* bodies = nullptr;
  SplitBodyExchange* split = nullptr;
  Reducer* reducer = nullptr;  ///< all processes (statistics)
};

}  // namespace grain
