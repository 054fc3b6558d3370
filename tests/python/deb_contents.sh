#!/usr/bin/env bash
# The python3-rowpump .deb that `cpack -G DEB` makes: architecture all, depends on python3
# and python3-redis, puts the package in /usr/lib/python3/dist-packages with its Lua scripts
# and py.typed, and the package imports from there with Debian's python3.
#   tests/python/deb_contents.sh BUILD_DIR
# cpack builds the target `all` before it packages: in a tree built already (as ctest runs)
# that costs nothing.
set -euo pipefail
build=$1
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
version=$(sed -n 's/^project(rowpump VERSION \([0-9.]*\).*/\1/p' "$source_dir/CMakeLists.txt")
work=$(mktemp -d /tmp/rowpump-pydeb-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -D CPACK_COMPONENTS_ALL=python -B "$work/debs") >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$work/debs/python3-rowpump_${version}_all.deb
[[ -e $deb ]] || { ls "$work/debs"; fail "no $(basename "$deb")"; }
[[ $(dpkg-deb -f "$deb" Architecture) == all ]] || fail "Architecture is not all"
depends=$(dpkg-deb -f "$deb" Depends)
[[ $depends == *python3-redis* ]] || fail "Depends ($depends) lacks python3-redis"

dpkg-deb -x "$deb" "$work/root"
site=$work/root/usr/lib/python3/dist-packages
for file in rowpump/__init__.py rowpump/worker.py rowpump/async_worker.py rowpump/py.typed \
    rowpump/details/serve_loop.py rowpump/protocol/messages.py \
    rowpump/protocol/lua/complete.lua rowpump/protocol/lua/take.lua rowpump/protocol/lua/leave.lua \
    rowpump/protocol/lua/give_back.lua rowpump/protocol/lua/beat.lua \
    "rowpump-$version.dist-info/METADATA"; do
    [[ -e $site/$file ]] || fail "the package lacks /usr/lib/python3/dist-packages/$file"
done
if find "$site" -name __pycache__ | grep -q .; then fail "the package ships __pycache__"; fi

cd "$work"
PYTHONPATH=$site /usr/bin/python3 -B - "$site" "$version" <<'PY'
import importlib.metadata
import sys

import rowpump
from rowpump.protocol import scripts

site, version = sys.argv[1], sys.argv[2]
assert rowpump.__file__.startswith(site), rowpump.__file__
assert rowpump.__version__ == version, rowpump.__version__
assert importlib.metadata.version("rowpump") == version
for name in scripts.SCRIPT_NAMES:
    assert scripts.Script.load(name).body.strip()
print(f"python3-rowpump {version}: imports from {site}")
PY
