#!/usr/bin/env bash
# The .deb packages, installed the way a user installs them: `cpack -G DEB` in the build
# directory gives rowpump and librowpump-worker-dev; apt installs both (and what they depend
# on) into a clean Debian 12 root made by debootstrap, run with systemd-nspawn. Then, in that
# root: `rowpump --version`, `rowpump migrate --apply` and `rowpump check` against throwaway
# MariaDB and Redis on the host's loopback, and an outside project built once with
# find_package(rowpump) and once with `pkg-config rowpump-worker`.
#
#   tests/system/deb_package.sh BUILD_DIR
# The debootstrap root and a copy with the compilers are cached in ROWPUMP_TEST_CACHE
# (default /var/cache/rowpump-test), downloaded .debs too; each run works on an overlay.
# Exits 77 (skipped) without root, systemd-nspawn or debootstrap. KEEP=1 leaves the work
# directory (and the overlay mounted) for a look after a failure.
set -euo pipefail
# shellcheck source=tests/system/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

build=${1:?usage: $0 BUILD_DIR}
require_root_and systemd-nspawn systemd-container
require_root_and debootstrap debootstrap
cache=${ROWPUMP_TEST_CACHE:-/var/cache/rowpump-test}
version=$(sed -n 's/^project(rowpump VERSION \([0-9.]*\).*/\1/p' "$ROWPUMP_ROOT/CMakeLists.txt")
[[ -n $version ]] || fail "no version in CMakeLists.txt"

work=$(mktemp -d /tmp/rowpump-deb-XXXXXX)
root=$work/root
cleanup() {
    mountpoint -q "$root" && umount "$root"
    [[ ! -e $work/servers/env ]] || "$ROWPUMP_ROOT/scripts/servers.sh" stop "$work/servers" || true
    rm -rf "$work"
}
on_exit cleanup
[[ -z ${KEEP:-} ]] || trap - EXIT

# in_root DIR CMD...: runs CMD in the Debian root DIR, with the host's network and a shared
# cache of downloaded packages.
in_root() {
    local dir=$1; shift
    mkdir -p "$cache/apt-archives/partial"
    systemd-nspawn -q --pipe --register=no --keep-unit -D "$dir" \
        --bind="$cache/apt-archives:/var/cache/apt/archives" \
        --setenv=DEBIAN_FRONTEND=noninteractive "${env_args[@]}" "$@" 2> >(grep -v "Attempted to remove disk file system" >&2)
}
env_args=()

step "cpack -G DEB"
(cd "$build" && cpack -G DEB -B "$work/debs") >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log"; fail "cpack failed"; }
debs=("$work/debs/rowpump_${version}_"*.deb "$work/debs/librowpump-worker-dev_${version}_"*.deb)
for deb in "${debs[@]}"; do
    check "$(basename "$deb"): version $version" test "$(dpkg-deb -f "$deb" Version)" = "$version"
done
dpkg-deb -x "${debs[1]}" "$work/dev"
soname=$(readelf -d "$work/dev/usr/lib/librowpump-worker.so.$version" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
check "SONAME librowpump-worker.so.${version%%.*} (is $soname)" test "$soname" = "librowpump-worker.so.${version%%.*}"

step "a clean Debian 12 root with a compiler (cached after the first run)"
base=$("$ROWPUMP_ROOT/scripts/debian-root.sh")
tools=$cache/bookworm-devtools
if [[ ! -e $tools/.complete ]]; then
    rm -rf "$tools"
    cp -a "$base" "$tools"
    rm -f "$tools/.complete"
    in_root "$tools" sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends g++ make cmake pkg-config >/dev/null'
    touch "$tools/.complete"
fi
mkdir -p "$work/upper" "$work/overlay-work" "$root"
mount -t overlay overlay -o "lowerdir=$tools,upperdir=$work/upper,workdir=$work/overlay-work" "$root"
check "rowpump is not there yet" test ! -e "$root/usr/bin/rowpump"

step "apt-get install ./rowpump_*.deb ./librowpump-worker-dev_*.deb"
mkdir -p "$root/srv/test"
cp "${debs[@]}" "$root/srv/test/"
cp -r "$ROWPUMP_ROOT/tests/package/consumer" "$root/srv/test/consumer"
in_root "$root" sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends /srv/test/*.deb' \
    >"$work/apt.log" 2>&1 || { tail -n 30 "$work/apt.log"; fail "apt-get install failed"; }
check "rowpump --version says $version" test "$(in_root "$root" rowpump --version)" = "rowpump $version"
check "the unit runs /usr/bin/rowpump" grep -q '^ExecStart=/usr/bin/rowpump run' "$root/usr/lib/systemd/system/rowpump.service"
check "the example configs are there" test -e "$root/usr/share/doc/rowpump/examples/demo.yaml"

step "rowpump migrate and check, from the package, against MariaDB and Redis on the loopback"
start_servers "$work/servers"
with_http_env "$work/servers/env"
mariadb --no-defaults -uroot --socket="$ROWPUMP_MYSQL_SOCKET" app --init-command='SET @rows=100' \
    <"$ROWPUMP_ROOT/deploy/seed.sql"
while IFS= read -r line; do env_args+=(--setenv="$line"); done < <(grep '^ROWPUMP_' "$work/servers/env")
config=/usr/share/doc/rowpump/examples/demo.yaml
in_root "$root" rowpump migrate -c "$config" --apply >"$work/migrate.log" 2>&1 ||
    { cat "$work/migrate.log"; fail "rowpump migrate --apply failed"; }
in_root "$root" rowpump check -c "$config" >"$work/check.log" 2>&1 ||
    { cat "$work/check.log"; fail "rowpump check failed"; }
say "ok: rowpump check passes"
env_args=()

step "an outside project with find_package(rowpump)"
in_root "$root" sh -c 'cmake -S /srv/test/consumer -B /srv/test/cmake-build -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build /srv/test/cmake-build >/dev/null' || fail "the CMake consumer did not build"
check "it runs" test "$(in_root "$root" /srv/test/cmake-build/rowpump_package_consumer)" = "worker_id=package-test ok"

step "the same project with pkg-config rowpump-worker"
check "pkg-config --modversion says $version" test "$(in_root "$root" pkg-config --modversion rowpump-worker)" = "$version"
in_root "$root" sh -c 'g++ -std=c++17 -o /srv/test/pc-consumer /srv/test/consumer/main.cpp $(pkg-config --cflags --libs rowpump-worker)' ||
    fail "the pkg-config consumer did not build"
check "it runs" test "$(in_root "$root" /srv/test/pc-consumer)" = "worker_id=package-test ok"

step "apt-get remove"
in_root "$root" apt-get remove -y -qq rowpump librowpump-worker-dev >/dev/null 2>&1 || fail "apt-get remove failed"
check "rowpump is gone" test ! -e "$root/usr/bin/rowpump"
check "the library is gone" test ! -e "$root/usr/lib/librowpump-worker.so.${version%%.*}"

say "package test passed in $((SECONDS - step_started)) s"
