# The job the Sidekiq processes run (`sidekiq -r` loads this file): it only notes that it ran.
# PEERS_OUT_DIR: where each process writes the ids it ran. PEERS_JOB_LOGGING=off: log warnings
# only, which leaves out the "start" and "done" lines Sidekiq logs for every job.

require "logger"
require "sidekiq"
require_relative "measure"

# Debian pairs Sidekiq 6.4 with redis-rb 4.8, which warns on every push_bulk about a change
# in its own 5.0.
Redis.silence_deprecations = true

# Only the sidekiq processes run jobs; sidekiq.rb loads this file for the class name.
RAN = Sidekiq.server? ? Measure.record_runs(Measure.env("PEERS_OUT_DIR")) : []

class NoopJob
  include Sidekiq::Job

  def perform(id)
    RAN << id
  end
end

if ENV["PEERS_JOB_LOGGING"] == "off"
  Sidekiq.configure_server { |config| config.logger.level = Logger::WARN }
end
