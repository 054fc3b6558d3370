#!/usr/bin/env bash
# Checks the protocol model (model/rowpump.pml, described in docs/model.md) with spin: every
# property of today's protocol exhaustively (2 rows, 2 workers, 2 dispatchers, one fault per
# run), and that the old protocol (-DOLD_LEASE) is still found to livelock and to discard an
# outcome. One line per property; exits non-zero if any property fails, or if the old
# protocol's bugs are no longer found (a model that stopped finding them checks nothing).
#   scripts/model-check.sh          all checks, two at a time
#   scripts/model-check.sh --trail  also prints the old protocol's livelock, step by step
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

trail=0
case ${1:-} in
    --trail) trail=1 ;;
    "") ;;
    *) die "unknown option: $1 (usage: scripts/model-check.sh [--trail])" ;;
esac
command -v spin >/dev/null || die "spin not found: run scripts/install-deps.sh"

model=$ROWPUMP_ROOT/model/rowpump.pml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# verify <name> <spin defines> <gcc defines> <pan options>: one verifier run in its own folder.
verify() {
    local dir=$work/$1
    mkdir -p "$dir"
    cp "$model" "$dir/"
    (
        cd "$dir"
        # shellcheck disable=SC2086 # word splitting of the option lists is wanted
        spin $2 -a rowpump.pml >spin.out 2>&1 && gcc -O1 -w $3 -o pan pan.c || exit
        TIMEFORMAT=%U
        # shellcheck disable=SC2086
        { time ./pan $4 >pan.out 2>&1; } 2>cpu
    ) || true
}

# Fields of a finished run, for the result lines.
states() { sed -n 's/^ *\([0-9]*\) states, stored.*/\1/p' "$work/$1/pan.out"; }
cpu() { cat "$work/$1/cpu" 2>/dev/null || echo "?"; }
found() { grep -qE "$2" "$work/$1/pan.out" 2>/dev/null; }
clean() { found "$1" 'errors: 0' && ! found "$1" 'Search not completed|max search depth too small'; }

failed=0
report() {  # report <PASS|FAIL> <text>
    say "$1  $2"
    [[ $1 == PASS ]] || failed=1
}

# -a -f: acceptance cycles under weak fairness (-A: assertions are the safety run's business).
# NFAIR: one fairness counter per process.
live=(-DNFAIR=3)
verify safety "" "-DSAFETY -DNOCLAIM" "-m1000000" &
verify rows_complete "" "${live[*]}" "-m2000000 -a -f -A -N rows_complete" &
wait
verify no_livelock "" "${live[*]}" "-m2000000 -a -f -A -N no_livelock" &
verify old_livelock "-DOLD_LEASE" "${live[*]}" "-m2000000 -a -f -A -N no_livelock" &
verify old_outcomes "-DOLD_LEASE" "-DSAFETY -DNOCLAIM" "-m1000000" &
wait

say "model: today's protocol (model/rowpump.pml), 2 rows, 2 workers, 2 dispatchers, 1 fault per run"
if clean safety; then
    figures="$(states safety) states, $(cpu safety) s"
    report PASS "an outcome is applied at most once per claim ($figures)"
    report PASS "on_success takes effect once per completion ($figures)"
    report PASS "outcomes first: no reported outcome is made stale by a claim ($figures)"
    report PASS "the ready list never grows past max_backlog; an ack trims what it read ($figures)"
else
    report FAIL "safety: $(grep -m1 -E 'assertion violated|invalid end state|error' \
        "$work/safety/pan.out" || echo 'the verifier did not run')"
fi
for property in rows_complete no_livelock; do
    case $property in
        rows_complete) text="every row that stays due is completed (weak fairness)" ;;
        no_livelock) text="no livelock: workers do not stay busy while nothing completes" ;;
    esac
    if clean $property; then
        report PASS "$text ($(states $property) states, $(cpu $property) s)"
    else
        report FAIL "$text: $(grep -m1 -E 'acceptance cycle|assertion violated|error' \
            "$work/$property/pan.out" || echo 'the verifier did not run')"
    fi
done
say "model: the old protocol (-DOLD_LEASE: leases never renewed), whose bugs must still be found"
if found old_livelock 'acceptance cycle'; then
    report PASS "livelock found, as expected ($(grep -m1 'acceptance cycle' "$work/old_livelock/pan.out"))"
else
    report FAIL "the old protocol's livelock was not found: the model no longer shows it"
fi
if found old_outcomes 'assertion violated.*done\[x_j\]'; then
    report PASS "an outcome made stale by a claim, as expected"
else
    report FAIL "the old protocol's discarded outcome was not found: the model no longer shows it"
fi

if ((trail)) && [[ -f $work/old_livelock/rowpump.pml.trail ]]; then
    say "trail of the old protocol's livelock (the cycle repeats from START OF CYCLE):"
    (cd "$work/old_livelock" && spin -t -B -DOLD_LEASE rowpump.pml) |
        sed -n 's/^ *\(MSC: \|<<<<<\)/\1/p' | sed 's/^MSC: /  /' | awk '/START OF CYCLE/ { n = NR } !n || NR - n < 30'
fi
exit "$failed"
