# delayed_job (ActiveRecord backend) on the benchmark's MariaDB: JOBS no-op jobs, then WORKERS
# `Delayed::Worker` processes with the defaults, timed until the table is empty (delayed_job
# deletes a job once it ran). Every job records its id, so jobs that ran twice show up.
#
#   ruby delayed_job.rb run JOBS WORKERS OUT_DIR    enqueue, measure, print the result line
#   ruby delayed_job.rb work OUT_DIR                one worker (run starts these)

require "active_record"
require "delayed_job"
require "delayed_job_active_record"
require "logger"
require_relative "measure"

# The job: it only notes that it ran.
NoopJob = Struct.new(:id) do
  def perform
    RAN << id
  end
end

# At ~100-500 jobs/s a run can take many minutes; after this long the rate is that of the
# jobs done so far (peers.sh shows the run as not done).
LIMIT_S = 600

def connect
  ActiveRecord::Base.establish_connection(
    adapter: "mysql2", host: Measure.env("ROWPUMP_MYSQL_HOST"),
    port: Integer(Measure.env("ROWPUMP_MYSQL_PORT")), username: Measure.env("ROWPUMP_MYSQL_USER"),
    password: Measure.env("ROWPUMP_MYSQL_PASSWORD"), database: Measure.env("ROWPUMP_MYSQL_DATABASE")
  )
end

# The table of delayed_job_active_record's migration template (`rails g delayed_job:active_record`).
def create_jobs_table
  ActiveRecord::Schema.define do
    create_table :delayed_jobs, force: true do |t|
      t.integer :priority, default: 0, null: false
      t.integer :attempts, default: 0, null: false
      t.text :handler, null: false
      t.text :last_error
      t.datetime :run_at
      t.datetime :locked_at
      t.datetime :failed_at
      t.string :locked_by
      t.string :queue
      t.timestamps null: true
    end
    add_index :delayed_jobs, %i[priority run_at], name: "delayed_jobs_priority"
  end
end

# The rows `Delayed::Job.enqueue(NoopJob.new(id))` writes, inserted 1,000 to a statement (one
# enqueue per job would take minutes and is not what is measured).
def enqueue(jobs)
  now = Delayed::Job.db_time_now
  (1..jobs).each_slice(1000) do |ids|
    Delayed::Job.insert_all(ids.map do |id|
      { handler: NoopJob.new(id).to_yaml, run_at: now, created_at: now, updated_at: now }
    end)
  end
end

def run(jobs, workers, dir)
  ActiveRecord::Migration.verbose = false
  connect
  create_jobs_table
  enqueue(jobs)
  left = -> { Delayed::Job.exists? ? Delayed::Job.count : 0 }
  pids = Measure.measure(jobs, left: left, poll: 0.5, limit: LIMIT_S) do
    Array.new(workers) { Process.spawn(RbConfig.ruby, __FILE__, "work", dir) }
  end
  Measure.stop(pids)
end

def work(dir)
  connect
  # As a Rails app's production log would have it: info, one line per job started and done.
  Delayed::Worker.logger = Logger.new(File.join(dir, "worker-#{Process.pid}.log"), level: :info)
  Object.const_set(:RAN, Measure.record_runs(dir))
  Delayed::Worker.new.start # returns on SIGTERM, after the job at hand
end

case ARGV
in ["run", jobs, workers, dir] then run(Integer(jobs), Integer(workers), dir)
in ["work", dir] then work(dir)
else abort "usage: #{$PROGRAM_NAME} run JOBS WORKERS OUT_DIR | work OUT_DIR"
end
