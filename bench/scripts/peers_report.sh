#!/usr/bin/env bash
# The peers benchmark's table and plot from its results (bench/scripts/peers.sh writes them).
#   bench/scripts/peers_report.sh PEERS_TSV OUT_DIR
# Writes OUT_DIR/peers.md (markdown, also printed) and OUT_DIR/peers.png (gnuplot): per system
# and configuration the median jobs/s over the rounds, with every round's figure beside it.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

(($# == 2)) || die "usage: $0 PEERS_TSV OUT_DIR"
results=$1 out=$2
[[ -s $results ]] || die "no results in $results"

# Medians per system and configuration, in the order they first ran. Columns of the result:
# label, MySQL work, median jobs/s, jobs/s per round, CPU-s per 1,000 jobs (total, processes,
# MariaDB, Redis), jobs run twice (all rounds), rounds, rounds with every job done, and the
# median jobs/s again with thousands separators.
summarize() {
    awk -F'\t' -v OFS='\t' '
        function median(list,   v, n, i, j, t) {
            n = split(list, v, " ")
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        function group(x,   s) {
            s = sprintf("%.0f", x)
            while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s)
            return s
        }
        # ", claim: redis" for a config ending in @redis; no @: the default of the code measured.
        function claim(config) {
            return config ~ /@redis$/ ? ", claim: redis" : config ~ /@mysql$/ ? ", claim: mysql" : ""
        }
        function label(name, config,   n) {
            if (name == "rowpump")
                return "rowpump, 2 workers x 4 threads, " \
                       (config ~ /^2x4x16/ ? "batch 16" : "default batch") claim(config)
            if (name == "rowpump-node")
                return "rowpump Node.js, 2 processes x concurrency 4" claim(config)
            if (name == "rowpump-python")
                return "rowpump Python, 2 processes x 4 threads" claim(config)
            if (name == "rq") return "RQ, " substr(config, 1, index(config, "p") - 1) " SimpleWorker processes"
            if (name == "delayed_job") return "delayed_job, " substr(config, 1, length(config) - 1) " workers"
            if (name == "sidekiq")
                return "Sidekiq, 2 processes x 10 threads, per-job logging " substr(config, 10)
            n = substr(config, 1, index(config, "x") - 1)
            return "BullMQ, " n (n == 1 ? " process" : " processes") " x concurrency 50"
        }
        function mysql(name, config) {
            if (name ~ /^rowpump/)
                return config ~ /@mysql$/ ? "yes: claim and outcome on the task row" \
                                          : "yes: the outcome on the task row"
            if (name == "delayed_job") return "yes: the queue is a MySQL table"
            return "no: Redis only"
        }
        {
            key = $1 "\t" $2
            if (!(key in rounds)) order[++keys] = key
            rounds[key]++
            rate = $6 > 0 ? $5 / $6 : 0
            rates[key] = rates[key] " " sprintf("%.3f", rate)
            shown[key] = shown[key] (rounds[key] > 1 ? " / " : "") group(rate)
            per = $5 > 0 ? 1000 / $5 : 0
            total[key] = total[key] " " sprintf("%.4f", ($7 + $8 + $9) * per)
            procs[key] = procs[key] " " sprintf("%.4f", $7 * per)
            db[key] = db[key] " " sprintf("%.4f", $8 * per)
            kv[key] = kv[key] " " sprintf("%.4f", $9 * per)
            twice[key] += $10
            complete[key] += ($5 == $4)
        }
        END {
            for (k = 1; k <= keys; k++) {
                key = order[k]; split(key, sc, "\t")
                print label(sc[1], sc[2]), mysql(sc[1], sc[2]), median(rates[key]), shown[key],
                    median(total[key]), median(procs[key]), median(db[key]), median(kv[key]),
                    twice[key], rounds[key], complete[key], group(median(rates[key]))
            }
        }' "$results"
}

markdown() {
    say "| system and configuration | jobs/s, median | per round | CPU-s per 1,000 jobs: all (workers / MariaDB / Redis) | writes to MySQL | jobs run twice | rounds done |"
    say "|---|---:|---|---:|---|---:|---:|"
    while IFS=$'\t' read -r label mysql _ shown total procs db kv twice rounds complete rate; do
        printf '| %s | %s | %s | %.2f (%.2f / %.2f / %.2f) | %s | %s | %s of %s |\n' \
            "$label" "$rate" "$shown" "$total" "$procs" "$db" "$kv" "$mysql" "$twice" \
            "$complete" "$rounds"
    done
}

# Bars of the median jobs/s (rowpump orange), log scale: delayed_job is two orders below.
# The title gives the jobs per run of the first system and of the Python pair when they differ.
jobs_per_run() {
    cut -f4 "$results" | awk '!seen[$0]++' | sed -E ':a; s/([0-9])([0-9]{3})($|,)/\1,\2\3/; ta' |
        paste -sd/ | sed 's|/| or |g'
}

plot() {
    gnuplot <<GNUPLOT
set terminal pngcairo size 1200,640 font "sans,10"
set output "$out/peers.png"
set title "No-op jobs per second (median of $(cut -f3 "$results" | sort -u | wc -l) interleaved rounds, $(jobs_per_run) jobs per run, same servers)"
set datafile separator "\t"
set style fill solid 0.8 border -1
set boxwidth 0.6
set logscale y
stats "$out/peers-summary.tsv" using 3 nooutput
set yrange [50:STATS_max * 2.5]
set ylabel "jobs/s (log scale)"
set xtics rotate by 25 right noenhanced
set grid ytics
set bmargin 13
set lmargin 44
unset key
plot "$out/peers-summary.tsv" \
     using 0:3:(strstrt(strcol(1), "rowpump") == 1 ? 0xd95f02 : 0x4a7ebb):xtic(1) \
     with boxes lc rgb variable, \
     "" using 0:3:12 with labels offset 0,0.8 noenhanced
GNUPLOT
}

export LC_ALL=C  # decimal points in printf and awk
summarize >"$out/peers-summary.tsv"
markdown <"$out/peers-summary.tsv" >"$out/peers.md"
plot
cat "$out/peers.md"
