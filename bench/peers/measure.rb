# What the Ruby peer programs share: where the servers are (the ROWPUMP_* variables of
# scripts/servers.sh), CPU seconds of a process from procfs, the record of which job ids ran,
# and the result line bench/scripts/peers.sh reads.

module Measure
  CLOCK_TICKS = 100 # USER_HZ on Linux

  module_function

  def env(name)
    ENV.fetch(name) { abort "#{$PROGRAM_NAME}: #{name} is not set (ROWPUMP_*: from scripts/servers.sh)" }
  end

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # utime + stime of every thread of the process, as procfs has it now.
  def cpu_seconds(pid)
    fields = File.read("/proc/#{pid}/stat").split(") ", 2).last.split
    (fields[11].to_i + fields[12].to_i).to_f / CLOCK_TICKS
  rescue Errno::ENOENT
    0.0
  end

  def server_cpu
    { mysql: cpu_seconds(env("ROWPUMP_MYSQL_PID")), redis: cpu_seconds(env("ROWPUMP_REDIS_PID")) }
  end

  # Each worker process keeps the ids of the jobs it ran and writes them out when it exits;
  # peers.sh counts the ids that appear more than once.
  def record_runs(dir)
    ran = []
    at_exit { File.write(File.join(dir, "ran-#{Process.pid}.txt"), ran.join("\n") + "\n") }
    ran
  end

  def alive?(pid)
    Process.waitpid(pid, Process::WNOHANG).nil?
  rescue Errno::ECHILD
    false
  end

  # Starts the workers (the block returns their pids), polls `left` (jobs not done yet) until
  # it is 0, `limit` seconds have passed or every worker has exited, then prints the figures
  # as one line: timed from the workers' start, CPU of the workers and the servers meanwhile.
  # Returns the pids; stopping the workers is up to the caller.
  def measure(jobs, left:, limit: 900, poll: 0.02)
    servers_before = server_cpu
    started = now
    pids = yield
    remaining = jobs
    loop do
      remaining = left.call
      break if remaining.zero? || now - started > limit || pids.none? { |pid| alive?(pid) }

      sleep poll
    end
    seconds = now - started
    servers_after = server_cpu
    workers_cpu = pids.sum { |pid| cpu_seconds(pid) }
    puts format("result jobs=%<jobs>d left=%<left>d seconds=%<s>.3f workers_cpu_s=%<w>.2f " \
                "mysql_cpu_s=%<m>.2f redis_cpu_s=%<r>.2f",
                jobs: jobs, left: remaining, s: seconds, w: workers_cpu,
                m: servers_after[:mysql] - servers_before[:mysql],
                r: servers_after[:redis] - servers_before[:redis])
    pids
  end

  # A second for the jobs the workers took last (Sidekiq puts a job it fetched back in the
  # queue if SIGTERM comes first), then SIGTERM, then waits: both peers finish the job at hand
  # and exit (and write the ids they ran).
  def stop(pids)
    sleep 1
    pids.each { |pid| Process.kill("TERM", pid) rescue Errno::ESRCH }
    pids.each { |pid| Process.wait(pid) rescue Errno::ECHILD }
  end
end
