#include "rowpump/dispatcher/loop/dispatcher.hpp"

#include "rowpump/dispatcher/loop/claim_path.hpp"
#include "rowpump/dispatcher/loop/queue_links.hpp"
#include "rowpump/dispatcher/loop/queue_runner.hpp"

#include "observe/http_endpoint.hpp"
#include "observe/observer.hpp"

namespace rowpump {

Dispatcher::Dispatcher(const Config& config) : config_(config) {
    for (std::size_t i = 0; i < config_.queues.size(); ++i) {
        auto sources = queue_sources(config_, config_.queues[i]);
        metrics_.push_back(std::make_unique<QueueMetrics>(
            config_.queues[i].name, static_cast<std::int64_t>(sources.size())));
        balances_.push_back(sources.size() > 1
                                ? std::make_unique<ShardBalance>(config_.queues[i].leader_timeout)
                                : nullptr);
        for (auto& source : sources) {
            health_.push_back(std::make_unique<QueueHealth>(source.queue.label()));
            loops_.push_back({std::make_unique<QueueSource>(std::move(source)), i});
        }
    }
    observer_ = std::make_unique<Observer>(config_, metrics_);
    if (config_.http) http_ = std::make_unique<HttpEndpoint>(config_, metrics_, *observer_);
}

Dispatcher::~Dispatcher() {
    stop();
    join();
}

void Dispatcher::start() {
    if (http_) http_->start();  // first: a port that cannot be had stops the start
    for (std::size_t i = 0; i < loops_.size(); ++i) {
        threads_.emplace_back([this, i] {
            const auto queue = loops_[i].queue;
            const QueueSource& source = *loops_[i].source;
            const auto links = live_links(source.config, source.queue);
            const auto path = make_claim_path(source.queue, &metrics_[queue]->keys());
            QueueRunner(source, stopping_, mutex_, wake_, *metrics_[queue], *health_[i],
                        balances_[queue].get(), *links, *path)
                .run();
        });
    }
    observer_->start();
}

void Dispatcher::stop() noexcept {
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    } catch (...) {
        stopping_ = true;  // a sleeping queue then wakes at its next timeout
    }
    wake_.notify_all();
}

void Dispatcher::join() {
    for (auto& t : threads_) {
        if (t.joinable()) t.join();
    }
    threads_.clear();
    // After the queues: the endpoint keeps answering (/healthz, /metrics) while they drain.
    if (http_) http_->stop();
    observer_->stop();
}

}  // namespace rowpump
