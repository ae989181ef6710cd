#!/usr/bin/env bash
# The next scripts/run.sh (issue 5), kept here while the studio is OFF by default: installs what is missing,
# builds, then opens the studio on the quickstart notebook. Needs a build with -DRT_BUILD_STUDIO=ON.
#   app/studio/open-studio.sh           the studio on app/studio/quickstart.ipynb
#   app/studio/open-studio.sh my.ipynb  the studio on another notebook (any rtorch-studio arguments pass through)
# Without a display (no DISPLAY or WAYLAND_DISPLAY) it says so and shows the headless command instead.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup.sh
scripts/build.sh
notebook=app/studio/quickstart.ipynb
if [[ ! -x build/bin/rtorch-studio ]]; then
  echo "run.sh: build/bin/rtorch-studio was not built (the studio is configured with -DRT_BUILD_STUDIO=ON)" >&2
  exit 1
fi
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
