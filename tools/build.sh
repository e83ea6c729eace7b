#!/usr/bin/env bash
# The two quick-start commands of grain:
#   tools/build.sh example   install what is missing, build (release), run the default example scene
#   tools/build.sh test      install what is missing, build (release), run the whole test suite
# and the sanitizer run of CI (docs/reliability.md):
#   tools/build.sh sanitize  install what is missing (with clang), build the unit and physics
#                            tests in the debug-asan preset (clang, ASan + UBSan, invariant
#                            checks) and run them
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mode="${1:-}"
case "$mode" in
  example|test|sanitize) ;;
  *) echo "usage: tools/build.sh example|test|sanitize" >&2; exit 2 ;;
esac

if [ "$mode" = sanitize ]; then
  "$root/tools/install-deps.sh" sanitize
else
  "$root/tools/install-deps.sh"
fi

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [ "$mode" = sanitize ]; then
  # Only the test programs of the unit and physics labels (target grain_sanitizer_tests); the
  # sanitizer options (halt on the first UBSan finding, LeakSanitizer on) are in the test preset.
  cmake --preset debug-asan "${launcher[@]}" >/dev/null
  cmake --build --preset debug-asan --target grain_sanitizer_tests
  # Left out: the tests that take over 100 s each in this build (long runs and large FCLIB
  # problems; docs/reliability.md), which together would take longer than all the others.
  slow='GranularPile\.(SettlesInsideItsBox|ComesToRestWithTheDriftSlop|ProxMethodsAgreeOnFrictionlessVelocities'
  slow+='|ThreadedRunAgreesWithSerialInBulk|ThreadedSweepsAreDeterministicForAFixedThreadCount)'
  slow+='|StepAllocations\.NoneOnceThePileHasSettled'
  slow+='|MatrixFreeIpm\.(AdditiveSchwarzNeedsFewerProductsOnFclibProblems|SolvesTheAssembledRelaxationOnFclibProblems)'
  slow+='|MatrixFreePqnInStepper\.FallbackIsTheVelocitySorFromTheStepsStart'
  slow+='|PqnInStepper\.OmegaContinuationSolvesTheColdLatticeWithoutFallback'
  slow+='|Gyroscopic\.TumblingBoxKeepsEnergyAndMomentumOver1000Seconds'
  slow+='|FclibSolvers\.SorAndApgdAgreeOnCapsulePile|LocalSolveValidate\.SolveReportsTheMessagesOfValidate'
  slow+='|NsnFclib\.ReachesToleranceOnRankDeficientProblems'
  slow+='|FclibIpm\.(DegenerateCapsulesReachTightToleranceWithApgdPolishing|AgreesWithRelaxedApgdOnCapsules)'
  exec ctest --preset debug-asan -L 'unit|physics' -LE validation -E "^($slow)\$"
fi

cmake --preset release "${launcher[@]}" >/dev/null
cmake --build --preset release

case "$mode" in
  example)
    out="$root/out/example"
    mkdir -p "$out"
    "$root/build/release/apps/grain_sim/grain-sim" -s "$root/scenes/pile.xml" -g "$out"
    ;;
  test)
    ctest --preset release
    ;;
esac
