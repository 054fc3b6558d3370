#pragma once

// The scripts of a queue with shards (its rows on several MySQL servers, one leader per
// shard). Workers know nothing of shards: they report to the queue's done list as always. Each
// shard's leader first routes what is there to the shards' own done lists, by the shard its
// token names (messages.hpp, token_shard), and then applies and acknowledges only its own list,
// fenced by its own leader lock. Every move is one script, so no report is lost or read twice,
// whichever leaders route at the same moment, and a shard whose server is down holds back only
// its own list.

namespace rowpump::protocol {

// Moves up to ARGV[1] done messages from the head of the queue's done list to the done list of
// the shard each names; a message that names no shard (malformed) goes to the first shard's
// list, whose leader sets it aside as bad. Returns how many it moved.
//   KEYS[1] the queue's done list, KEYS[2..] the shards' done lists, in shard order;
//   ARGV[1] how many at most
extern const char* const kRouteDoneScript;

// kReapScript for a queue with shards: takes the tasks of a worker whose heartbeat expired and
// reports each on the worker's behalf, "<ready message><ARGV[2]>" (a retry), to the queue's
// done list, from where its shard's leader applies it; counts them in the stats hash. Returns
// how many it took.
//   KEYS[1] heartbeat, KEYS[2] processing list, KEYS[3] workers set, KEYS[4] done list,
//   KEYS[5] stats hash; ARGV[1] worker id, ARGV[2] what follows each ready message,
//   ARGV[3] stats field
extern const char* const kReapToDoneScript;

}  // namespace rowpump::protocol
