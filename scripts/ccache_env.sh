# Sourced by build.sh and test.sh: one ccache for every checkout on this machine (CI clones to a
# new folder each time), so a fresh clone compiles only what changed.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
# The release, sanitizer and nvcc trees together need more than ccache's default 5 GiB.
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
