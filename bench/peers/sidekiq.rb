# Sidekiq on the benchmark's Redis: JOBS no-op jobs pushed with push_bulk, then PROCESSES
# `sidekiq` processes of CONCURRENCY threads, timed until the queue is empty (each thread then
# holds at most the one no-op job it just fetched; peers.sh checks afterwards that every job ran).
#
#   ruby sidekiq.rb JOBS PROCESSES CONCURRENCY on|off OUT_DIR    (on|off: per-job logging)

require "sidekiq"
require "sidekiq/api"
require_relative "sidekiq_job"

jobs, processes, concurrency, logging, dir = ARGV
abort "usage: #{$PROGRAM_NAME} JOBS PROCESSES CONCURRENCY on|off OUT_DIR" unless dir
jobs = Integer(jobs)

# Sidekiq's docs: at most 1,000 jobs per push_bulk call.
(1..jobs).each_slice(1000) do |ids|
  Sidekiq::Client.push_bulk("class" => NoopJob, "args" => ids.map { |id| [id] })
end

queue = Sidekiq::Queue.new("default")
env = { "PEERS_OUT_DIR" => dir, "PEERS_JOB_LOGGING" => logging }
job_file = File.join(__dir__, "sidekiq_job.rb")
pids = Measure.measure(jobs, left: -> { queue.size }) do
  Array.new(Integer(processes)) do |i|
    Process.spawn(env, "sidekiq", "-r", job_file, "-c", concurrency,
                  %i[out err] => File.join(dir, "sidekiq-#{i}.log"))
  end
end
Measure.stop(pids)
