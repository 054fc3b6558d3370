#include "rowpump/dispatcher/loop/claim_path.hpp"

#include "loop/row_claim.hpp"
#include "loop/scan_claim.hpp"

namespace rowpump {

std::unique_ptr<ClaimPath> make_claim_path(const QueueConfig& queue, KeyFigures* keys) {
    switch (queue.claim) {
        case ClaimMode::mysql:
            return std::make_unique<RowClaim>(queue, keys);
        case ClaimMode::redis:
            return std::make_unique<ScanClaim>(queue);
    }
    return nullptr;
}

}  // namespace rowpump
