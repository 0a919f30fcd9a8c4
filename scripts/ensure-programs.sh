#!/usr/bin/env bash
# Make sure the system programs a command needs are installed from Debian:
# `scripts/ensure-programs.sh test` (make test: the browser tests' Chromium and its
# Japanese font, HAProxy for the fault-drill test) or `... services` (make
# run-services, make drill). The programs are listed once, in system-programs.txt.
# A no-op when all are present; installing needs root (CI runs as root) or sudo.
set -euo pipefail

need=${1:?usage: ensure-programs.sh test|services [--dry-run]}
dry_run=${2:-}
here=$(dirname "$0")
list=${SYSTEM_PROGRAMS:-$here/system-programs.txt}
missing=()
while read -r program package users; do
    case $program in '' | '#'*) continue ;; esac
    [[ " $users " == *" $need "* ]] || continue
    if [[ $program == /* ]]; then
        [ -e "$program" ] && continue
    else
        command -v "$program" >/dev/null 2>&1 && continue
    fi
    [[ " ${missing[*]-} " == *" $package "* ]] || missing+=("$package")
done <"$list"

if [ "$dry_run" = --dry-run ]; then
    # What would be installed, a package a line (tests/test_installers.py).
    [ ${#missing[@]} -eq 0 ] || printf '%s\n' "${missing[@]}"
    exit 0
fi
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
bash "$here/apt-install.sh" "ensure-programs $need" "${missing[@]}"
echo "ensure-programs $need: installed ${missing[*]}"
