#!/bin/sh
# run_on_xvfb.sh SCREEN PROGRAM ARGS...: PROGRAM on a virtual X display (xvfb-run -a, screen WxHxD), exiting
# with PROGRAM's own status. xvfb-run itself exits 5 when removing its temporary folder races the X server's
# shutdown (seen on a loaded machine), which says nothing about the program under test.
screen=$1
shift
status_file=$(mktemp) || exit 1
xvfb-run -a -s "-screen 0 $screen" sh -c '"$@"; echo $? > "$0"' "$status_file" "$@"
xvfb_status=$?
status=$(cat "$status_file")
rm -f "$status_file"
if [ -z "$status" ]; then
  echo "run_on_xvfb.sh: $1 did not run (xvfb-run exited $xvfb_status)" >&2
  exit 1
fi
exit "$status"
