#!/usr/bin/env bash
# Installs what is missing, builds, then opens the studio on the quickstart notebook (a guided tour).
#   scripts/run.sh           the studio on samples/notebooks/quickstart.ipynb
#   scripts/run.sh my.ipynb  the studio on another notebook (any rtorch-studio arguments pass through)
# Without a display (no DISPLAY or WAYLAND_DISPLAY) it says so and shows the headless command instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
notebook=samples/notebooks/quickstart.ipynb
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
  cat >&2 <<MSG
run.sh: no display (DISPLAY and WAYLAND_DISPLAY are unset), so the studio window cannot open.
Run the notebook headless instead, as jupyter nbconvert --execute would:
  build/bin/rtorch-studio --execute $notebook --output /tmp/quickstart-executed.ipynb
or open the window on a virtual display:
  xvfb-run -a build/bin/rtorch-studio $notebook
MSG
  exit 0
fi
if [[ $# -eq 0 ]]; then
  set -- "$notebook"
fi
exec build/bin/rtorch-studio "$@"
