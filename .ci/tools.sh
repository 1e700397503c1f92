#!/usr/bin/env bash
# System tools some tests drive for real: zip and jq (a lab's own shell commands), Debian's
# chromium (the browser test of `awsview serve`) and tmux (`awsview split`, panes killed under the
# viewer). Installed with apt-get when missing and possible.
set -u
find_missing() {
    missing=()
    command -v zip >/dev/null || missing+=(zip)
    command -v jq >/dev/null || missing+=(jq)
    command -v chromium >/dev/null || missing+=(chromium)
    command -v tmux >/dev/null || missing+=(tmux)
}
find_missing
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "note: cannot install ${missing[*]} here (needs root and apt-get); the tests that use them will say so" >&2
    exit 0
fi
# Two `make test` started together (two checkouts) both get here: one at a time, and the second
# looks again once the first is done; apt-get waits for a dpkg lock something else holds.
if command -v flock >/dev/null; then
    exec 9>/var/lock/awsview-tools.lock && flock -w 900 9
    find_missing
    [ ${#missing[@]} -eq 0 ] && exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt=(apt-get -o DPkg::Lock::Timeout=600 -y -q)
"${apt[@]}" install "${missing[@]}" >/dev/null 2>&1 || { "${apt[@]}" update >/dev/null 2>&1 && "${apt[@]}" install "${missing[@]}" >/dev/null 2>&1; } \
    || echo "note: apt-get could not install ${missing[*]}" >&2
exit 0
