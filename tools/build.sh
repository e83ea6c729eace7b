#!/usr/bin/env bash
# The two quick-start commands of grain:
#   tools/build.sh example   install what is missing, build (release), run the default example scene
#   tools/build.sh test      install what is missing, build (release), run the whole test suite
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mode="${1:-}"
case "$mode" in
  example|test) ;;
  *) echo "usage: tools/build.sh example|test" >&2; exit 2 ;;
esac

"$root/tools/install-deps.sh"

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
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
