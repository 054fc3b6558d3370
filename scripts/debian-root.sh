#!/usr/bin/env bash
# A minimal Debian 12 root made with debootstrap, cached outside the repository so that the
# package and Docker tests pay for it once per machine (about a minute and 150 MB).
#
#   scripts/debian-root.sh          make it if missing; print its path
#
# ROWPUMP_TEST_CACHE (default /var/cache/rowpump-test) holds it as bookworm-minbase/. A
# half-made root (debootstrap interrupted) has no .complete stamp and is made again.
# Needs root and debootstrap (scripts/install-deps.sh --system installs it).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cache=${ROWPUMP_TEST_CACHE:-/var/cache/rowpump-test}
root=$cache/bookworm-minbase
mirror=${ROWPUMP_DEBIAN_MIRROR:-http://deb.debian.org/debian}

if [[ ! -e $root/.complete ]]; then
    ((EUID == 0)) || die "debootstrap needs root"
    command -v debootstrap >/dev/null || die "debootstrap is not installed"
    rm -rf "$root"
    mkdir -p "$cache"
    log "debootstrap bookworm into $root (once per machine)"
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
        { tail -n 20 "$cache/debootstrap.log" >&2; die "debootstrap failed (log: $cache/debootstrap.log)"; }
    # Leaves nothing behind that a copy of the root should not inherit.
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    touch "$root/.complete"
fi
printf '%s\n' "$root"
