package stak

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Mark-all-read limits (docs/schemas/stak.md, "Mark all as read").
const (
	// MaxReadAll bounds the messages one read-all call marks (?limit=);
	// it is also the default. One call is then at most two transactions.
	MaxReadAll = 100
	// MaxReadAllScan bounds the messages one call examines, read or not,
	// so a long read history cannot make a call slow: the answer's cursor
	// continues where it stopped.
	MaxReadAllScan = 1000
	// maxTransactItems is DynamoDB's limit of actions per transaction.
	maxTransactItems = 100
	// readAllAttempts bounds how often a group of marks is re-sent after
	// concurrent marks took some of its messages.
	readAllAttempts = 2 * MaxReadAll
)

// Bound is where a read-all starts: the newest message it may mark.
// Zero values mean "the newest message".
type Bound struct {
	// UpTo is a message id: it and older messages are marked.
	UpTo string
	// UpToTime is epoch seconds: messages delivered at or before it are
	// marked.
	UpToTime int64
}

// ReadAll is the answer of MarkAllRead.
type ReadAll struct {
	// Marked counts the messages this call marked read (each counted in
	// read exactly once, whoever else marks them).
	Marked int `json:"marked"`
	// Examined counts the live messages looked at, read or not.
	Examined int `json:"examined"`
	// Next continues with older messages; "" when none are left.
	Next string `json:"next_cursor,omitempty"`
}

func readAllScope(tenant, inbox, uid string) string {
	return "stak/read-all/" + tenant + "#" + inbox + "#" + uid
}

// start is the position of a feed walk that includes the bound: the walk
// begins strictly below the position, and '~' sorts after every base36
// digit, so "m#<id>~" is just above m#<id>.
func (b Bound) start() string {
	switch {
	case b.UpTo != "":
		return contract.PrefixMessage + b.UpTo + "~"
	case b.UpToTime > 0:
		// Ids start with the millisecond of delivery: everything delivered
		// in the bound's second sorts below the next second's first id.
		ms := strconv.FormatInt((b.UpToTime+1)*1000, 36)
		return contract.PrefixMessage + strings.Repeat("0", max(0, 9-len(ms))) + ms
	}
	return ""
}

// MarkAllRead marks uid's unread messages of inbox read, newest first:
// user messages get readat, public messages a receipt, as MarkRead does.
// It marks at most limit messages (1–MaxReadAll) and examines at most
// MaxReadAllScan; the answer's Next continues below the last message
// examined (pass it as after, with a zero bound). The messages of a call
// are written in as few transactions as the 100-action limit allows, each
// with the summed read counters; a message that a concurrent mark took
// first fails its condition and is dropped from the group before it is
// re-sent, so read counts every message once however calls race.
func (s *Store) MarkAllRead(ctx context.Context, tenant, inbox, uid string, bound Bound, after string, limit int) (*ReadAll, error) {
	if _, err := s.Inbox(ctx, tenant, inbox); err != nil {
		return nil, err
	}
	limit = min(max(limit, 1), MaxReadAll)
	scope := readAllScope(tenant, inbox, uid)
	start := feedPosition{User: bound.start(), Public: bound.start()}
	user, public, err := s.sources(tenant, inbox, uid, scope, after, start, limit)
	if err != nil {
		return nil, err
	}
	res := &ReadAll{}
	var unread []Message
	for len(unread) < limit && res.Examined < MaxReadAllScan {
		m, err := next(ctx, user, public)
		if err != nil {
			return nil, err
		}
		if m == nil {
			break
		}
		res.Examined++
		if m.ReadAt == nil {
			unread = append(unread, *m)
		}
	}
	up := Partition{Tenant: tenant, UID: uid, Inbox: inbox}
	for len(unread) > 0 {
		n := s.markGroupSize(unread)
		marked, err := s.markGroup(ctx, up, unread[:n], s.now().Unix())
		res.Marked += marked
		if err != nil {
			return nil, err
		}
		unread = unread[n:]
	}
	more, err := hasNext(ctx, user, public)
	if err != nil || !more {
		return res, err
	}
	res.Next, err = ddb.EncodeCursor(s.codec, scope, feedPosition{User: user.pos, Public: public.pos})
	return res, err
}

// markGroupSize is how many of ms fit in one transaction: one action per
// user message, two per public message (the check that it still exists and
// the receipt), plus one counter update per distinct counter item.
func (s *Store) markGroupSize(ms []Message) int {
	actions, cats := 1, map[string]bool{} // c#*
	for i, m := range ms {
		need := 1
		if m.UID == contract.PublicUID {
			need = 2
		}
		if c := m.Taxonomy.Category; c != "" && !cats[c] {
			need++
		}
		if actions+need > maxTransactItems {
			return i
		}
		actions += need
		if c := m.Taxonomy.Category; c != "" {
			cats[c] = true
		}
	}
	return len(ms)
}

// markGroup marks ms in one transaction with their summed counters and
// returns how many it marked. A cancelled transaction names the actions
// whose condition failed: those messages were marked (or removed) by
// someone else and are dropped; the rest is re-sent. Conflicts alone are
// retried by transact.
func (s *Store) markGroup(ctx context.Context, up Partition, ms []Message, now int64) (int, error) {
	for range readAllAttempts {
		if len(ms) == 0 {
			return 0, nil
		}
		tx, owner, err := s.markActions(up, ms, now)
		if err != nil {
			return 0, err
		}
		err = s.transact(ctx, tx)
		if err == nil {
			return len(ms), nil
		}
		var ce *ddb.ConditionError
		if !errors.As(err, &ce) {
			return 0, err
		}
		drop := map[int]bool{}
		for _, i := range ce.Failed {
			if owner[i] >= 0 {
				drop[owner[i]] = true
			}
		}
		if len(drop) == 0 {
			// Cancelled for a reason no message explains: not something
			// a re-send can fix.
			return 0, err
		}
		kept := ms[:0:0]
		for i, m := range ms {
			if !drop[i] {
				kept = append(kept, m)
			}
		}
		ms = kept
	}
	return 0, fmt.Errorf("stak: read-all: %d messages still contended after %d attempts", len(ms), readAllAttempts)
}

// markActions builds the transaction of markGroup; owner[i] is the index in
// ms of the message that action i marks, -1 for counter updates.
func (s *Store) markActions(up Partition, ms []Message, now int64) (ddb.Tx, []int, error) {
	unreadUser, exists, absent := markRead(now), ddb.Exists(contract.AttrPK), ddb.NotExists(contract.AttrPK)
	var (
		tx    ddb.Tx
		owner []int
		cats  = map[string]int{}
		order []string
	)
	for i, m := range ms {
		sk := contract.PrefixMessage + m.Header.ID
		if m.UID == contract.PublicUID {
			rc, err := ddb.MarshalItem(receipt{PK: up.PK(), SK: sk, ReadAt: now, ExpiredAt: m.ExpiredAt, Taxonomy: m.Taxonomy}, contract.AttrPK, contract.AttrSK)
			if err != nil {
				return nil, nil, fmt.Errorf("stak: marshal receipt: %w", err)
			}
			tx.Check(exists.TxCheck(s.table, key(contract.PublicPK(up.Tenant, up.Inbox), sk)), nil).
				Put(absent.TxPut(s.table, rc), nil)
			owner = append(owner, i, i)
		} else {
			tx.Update(unreadUser.TxUpdate(s.table, key(up.PK(), sk)), nil)
			owner = append(owner, i)
		}
		if c := m.Taxonomy.Category; c != "" {
			if cats[c] == 0 {
				order = append(order, c)
			}
			cats[c]++
		}
	}
	counters := []struct {
		sk string
		n  int
	}{{contract.KeyStatsAll, len(ms)}}
	for _, c := range order {
		counters = append(counters, struct {
			sk string
			n  int
		}{contract.PrefixStats + c, cats[c]})
	}
	for _, c := range counters {
		tx.Update(s.counterUpdate(up, c.sk, 0, c.n, 0), nil)
		owner = append(owner, -1)
	}
	return tx, owner, nil
}
