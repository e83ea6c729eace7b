// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include <grain/core/common/settings.hpp>
#include <grain/core/math/types.hpp>

namespace grain {

/// The MPISettings of a scene: the domain decomposition of distributed runs and its rebuilds
/// (GRSF names). One type for the scene reader (grain_io, which fills it), the load balancer
/// (grain_mpi, which uses it; mpi::LoadBalanceSettings) and grain-sim-mpi; it lives in the core
/// because neither of the two other libraries may include the other. The defaults are those of
/// the scene format (a scene without MPISettings makes grain-sim-mpi choose its own settings).
struct LoadBalanceSettings {
  enum class Mode : std::uint8_t { Static, Dynamic };
  enum class Policy : std::uint8_t { AlwaysRebuild, BodyLimit };
  /// Weight of a body in a rebuild: 1 (GRSF), or its process's measured compute time per body
  /// (the caller measures and passes BalancedBody::weight).
  enum class BodyWeight : std::uint8_t { Count, Time };
  enum class TopologyType : std::uint8_t { Grid, KdTree };
  /// Frame of the decomposition: Mvbb and BinetTensor both use the principal axes of the
  /// bodies' centres (kd-tree only; the grid is axis-aligned and uses the AABB for both).
  enum class BuildMode : std::uint8_t { Mvbb, Aabb, BinetTensor, Predefined };

  // ProcessTopology
  Mode mode = Mode::Dynamic;
  Policy policy = Policy::AlwaysRebuild;         ///< dynamic mode only
  std::uint32_t policyCheckEveryXTimeStep = 10;  ///< steps between rebuild decisions (>= 1)
  std::uint32_t bodyLimit = 500;                 ///< Policy::BodyLimit: local bodies per process
  bool doLocalComputations = true;               ///< accepted for GRSF files, no effect
  BodyWeight bodyWeight = BodyWeight::Count;     ///< dynamic mode only

  // ProcessTopology/Topology
  TopologyType type = TopologyType::Grid;
  BuildMode buildMode = BuildMode::Mvbb;
  Real minCellSize = 1e-3;  ///< m: smallest grid cell extent (the grid box grows to respect it)
  std::array<std::uint32_t, 3> gridDimension{1, 1, 1};  ///< grid only; product = process count
  bool matchProcessDimToExtent = true;  ///< grid only: dimensions from the box extent
  bool aligned = true;                  ///< BuildMode::Predefined only (must be true)
  Vec3 minPoint = Vec3::Zero();         ///< BuildMode::Predefined box (I frame, m)
  Vec3 maxPoint = Vec3::Zero();

  // ProcessTopology/MassPointPrediction
  std::uint32_t massPointCount = 5;  ///< predicted points per body (0: the centres only)
  Real massPointDeltaT = 0.1;        ///< s between predicted points

  // ProcessTopology/GlobalOutlierFilter
  bool outlierFilter = false;  ///< GlobalOutlierFilter given
  std::uint32_t outlierKnnMean = 20;
  Real outlierStdDeviationMult = 4.0;
  std::uint32_t outlierAllowSplitAbove = 10;  ///< leaf size of the kNN search tree

  // MPISettings/InclusionSolverSettings
  std::uint32_t splitNodeUpdateRatio = 1;  ///< sweeps between averaging split bodies
  std::uint32_t convergenceCheckRatio = 1;
  std::uint32_t reserveSplitNodes = 2000;  ///< accepted for GRSF files, no effect

  /// The description of the members (grain/core/common/settings.hpp); each names the element
  /// under <MPISettings> that holds it. outlierFilter is the presence of <GlobalOutlierFilter>.
  template <class V>
  static constexpr void describe(V&& v) {
    using S = LoadBalanceSettings;
    using settings::Bound;
    using settings::field;
    constexpr std::string_view kPt = "ProcessTopology";
    constexpr std::string_view kTopo = "Topology";
    v(field<&S::mode>("mode").required().in(kPt));
    v(field<&S::policy>("policy").required().in(kPt).withDoc(
        "alwaysRebuild: at every check; bodyLimit: when a process has more than "
        "bodyLimit bodies"));
    v(field<&S::policyCheckEveryXTimeStep>("policyCheckEveryXTimeStep")
          .in(kPt)
          .withBound(Bound::AtLeastOne)
          .withDoc("steps between rebuild checks"));
    v(field<&S::bodyLimit>("bodyLimit")
          .in(kPt)
          .withBound(Bound::AtLeastOne)
          .withDoc("body count that triggers a rebuild (policy bodyLimit)"));
    v(field<&S::doLocalComputations>("doLocalComputations")
          .in(kPt)
          .withDoc("accepted for GRSF files; grain always builds the decomposition in parallel "
                   "from each process's bodies"));
    v(field<&S::bodyWeight>("bodyWeight")
          .in(kPt)
          .withDoc("weight of a body in a rebuild (grain only): count: 1 each, as GRSF; time: "
                   "this process's compute time since the last rebuild (its step time less the "
                   "time spent waiting in MPI calls) per body it owns, so slower processes get "
                   "fewer bodies. The decomposition then depends on the measured times, and "
                   "results are reproducible only to the solver's tolerance"));
    v(field<&S::type>("type").required().in(kTopo));
    v(field<&S::buildMode>("buildMode").in(kTopo));
    v(field<&S::minCellSize>("minCellSize")
          .required()
          .in(kTopo)
          .withBound(Bound::Positive)
          .withProgramBound(Bound::NonNegative)  // 0: no minimum (grain-sim-mpi's first kd-tree)
          .withUnit("m"));
    v(field<&S::gridDimension>("dimension")
          .required()
          .in(kTopo)
          .withBound(Bound::AtLeastOne)
          .withDoc("cells along x, y, z (product = number of processes) when "
                   "matchProcessDimToExtent=\"false\""));
    v(field<&S::matchProcessDimToExtent>("matchProcessDimToExtent")
          .in(kTopo)
          .withDoc("true: the factorisation of the process count whose cells are closest to "
                   "cubes; false: dimension as given"));
    constexpr auto predefined = [](const S& s) { return s.buildMode == BuildMode::Predefined; };
    constexpr std::string_view kWithPredefined = "with buildMode=\"predefined\"";
    v(field<&S::aligned>("aligned")
          .derived()
          .requiredWhen(predefined, kWithPredefined)
          .in(kTopo)
          .withDoc("buildMode=\"predefined\": must be true (axis-aligned box)"));
    v(field<&S::minPoint>("minPoint")
          .derived()
          .requiredWhen(predefined, kWithPredefined)
          .in(kTopo)
          .withUnit("m")
          .withDoc("buildMode=\"predefined\": lower corner (required there)"));
    v(field<&S::maxPoint>("maxPoint")
          .derived()
          .requiredWhen(predefined, kWithPredefined)
          .in(kTopo)
          .withUnit("m")
          .withDoc("buildMode=\"predefined\": upper corner (> minPoint)"));
    v(settings::ignored<S, Real>("minGridSize")
          .in(kTopo)
          .withBound(Bound::Positive)
          .withDoc("not read"));
    v(field<&S::massPointCount>("nPoints")
          .in("MassPointPrediction")
          .withBound(Bound::AtLeastOne)
          .withProgramBound(Bound::NonNegative)  // 0: the centres (grain-sim-mpi's first build)
          .withDoc("predicted points per body"));
    v(field<&S::massPointDeltaT>("deltaT")
          .in("MassPointPrediction")
          .withBound(Bound::Positive)
          .withUnit("s")
          .withDoc("time between predicted points (explicit Euler under gravity; a point stops "
                   "at a static halfspace)"));
    v(field<&S::outlierKnnMean>("kNNMean")
          .in("GlobalOutlierFilter")
          .withBound(Bound::AtLeastOne)
          .withDoc("neighbours in the mean distance of a point"));
    v(field<&S::outlierStdDeviationMult>("stdDeviationMult")
          .in("GlobalOutlierFilter")
          .withBound(Bound::Positive)
          .withDoc("points farther than mean + stdDeviationMult sigma are outliers"));
    v(field<&S::outlierAllowSplitAbove>("allowSplitAbove")
          .in("GlobalOutlierFilter")
          .withBound(Bound::AtLeastOne)
          .withDoc("points per leaf of the kNN search tree"));
    v(field<&S::splitNodeUpdateRatio>("splitNodeUpdateRatio")
          .required()
          .in("InclusionSolverSettings")
          .withBound(Bound::AtLeastOne)
          .withDoc("sweeps between averaging the velocities of split bodies"));
    v(field<&S::convergenceCheckRatio>("convergenceCheckRatio")
          .required()
          .in("InclusionSolverSettings")
          .withBound(Bound::AtLeastOne)
          .withDoc("velocity exchanges between global convergence checks"));
    v(field<&S::reserveSplitNodes>("reserveSplitNodes")
          .in("InclusionSolverSettings")
          .withDoc("accepted for GRSF files; grain sizes its split-body buffers itself"));
  }

  /// The checks between members (settings::Relation): the predefined box is not empty.
  template <class V>
  static constexpr void relations(V&& v) {
    using S = LoadBalanceSettings;
    v(settings::relation<&S::maxPoint, &S::minPoint>("maxPoint", settings::Order::Greater,
                                                     "minPoint")
          .in("Topology")
          .when([](const S& s) { return s.buildMode == BuildMode::Predefined; }));
  }
};

/// Throws grain::Error naming the member if a value is out of range: the bounds of
/// LoadBalanceSettings::describe (for programs, massPointCount and minCellSize may be 0) and its
/// relations.
inline void validate(const LoadBalanceSettings& s) {
  settings::check(s);
}

/// The names of the enumerations in scene files (and in messages).
inline constexpr settings::EnumName<LoadBalanceSettings::Mode> kLoadBalanceModeNames[] = {
    {LoadBalanceSettings::Mode::Static, "static"},
    {LoadBalanceSettings::Mode::Dynamic, "dynamic"},
};
inline constexpr settings::EnumName<LoadBalanceSettings::Policy> kLoadBalancePolicyNames[] = {
    {LoadBalanceSettings::Policy::AlwaysRebuild, "alwaysRebuild"},
    {LoadBalanceSettings::Policy::BodyLimit, "bodyLimit"},
};
inline constexpr settings::EnumName<LoadBalanceSettings::BodyWeight> kBodyWeightNames[] = {
    {LoadBalanceSettings::BodyWeight::Count, "count"},
    {LoadBalanceSettings::BodyWeight::Time, "time"},
};
inline constexpr settings::EnumName<LoadBalanceSettings::TopologyType> kTopologyTypeNames[] = {
    {LoadBalanceSettings::TopologyType::Grid, "grid"},
    {LoadBalanceSettings::TopologyType::KdTree, "kdTree"},
};
inline constexpr settings::EnumName<LoadBalanceSettings::BuildMode> kBuildModeNames[] = {
    {LoadBalanceSettings::BuildMode::Mvbb, "MVBB"},
    {LoadBalanceSettings::BuildMode::Aabb, "AABB"},
    {LoadBalanceSettings::BuildMode::BinetTensor, "binetTensor"},
    {LoadBalanceSettings::BuildMode::Predefined, "predefined"},
};
constexpr std::span<const settings::EnumName<LoadBalanceSettings::Mode>> enumNames(
    LoadBalanceSettings::Mode) {
  return kLoadBalanceModeNames;
}
constexpr std::span<const settings::EnumName<LoadBalanceSettings::Policy>> enumNames(
    LoadBalanceSettings::Policy) {
  return kLoadBalancePolicyNames;
}
constexpr std::span<const settings::EnumName<LoadBalanceSettings::BodyWeight>> enumNames(
    LoadBalanceSettings::BodyWeight) {
  return kBodyWeightNames;
}
constexpr std::span<const settings::EnumName<LoadBalanceSettings::TopologyType>> enumNames(
    LoadBalanceSettings::TopologyType) {
  return kTopologyTypeNames;
}
constexpr std::span<const settings::EnumName<LoadBalanceSettings::BuildMode>> enumNames(
    LoadBalanceSettings::BuildMode) {
  return kBuildModeNames;
}

}  // namespace grain
