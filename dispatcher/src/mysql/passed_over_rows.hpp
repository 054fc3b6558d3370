#pragma once

// Claims pass over rows other transactions hold locked (FOR UPDATE SKIP LOCKED). Now and then,
// after a claim or a scan from the start of the order, one plain read lists the rows still
// claimable (QueueSql::passed_over); one found locked for long is logged once (LockedRowWatch).

#include <cppconn/prepared_statement.h>

#include <memory>
#include <string>

#include "rowpump/dispatcher/loop/locked_row_watch.hpp"
#include "rowpump/dispatcher/mysql/mysql_session.hpp"

namespace rowpump {

class InFlight;

class PassedOverRows {
public:
    explicit PassedOverRows(MysqlSession& session);
    // Looks, if one is due. `in_flight` (claim: redis): rows in flight are claimable, and not
    // locked. `lease_horizon` (claim: mysql): the claim's (LeaseKeeper::horizon).
    void look(const InFlight* in_flight, const std::string* lease_horizon = nullptr);

private:
    MysqlSession& session_;
    std::unique_ptr<sql::PreparedStatement> passed_over_;
    LockedRowWatch locked_rows_;
};

}  // namespace rowpump
