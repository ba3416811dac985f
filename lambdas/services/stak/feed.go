package stak

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Page is one page of a user's feed.
type Page struct {
	Messages []Message `json:"messages"`
	// Next is the cursor of the next page, "" on the last page.
	Next string `json:"next_cursor,omitempty"`
}

// feedPosition is where a feed page ended in each partition: the sort key
// of the last item taken from it, "" for "not started". Both are needed:
// the two partitions are consumed at different rates.
type feedPosition struct {
	User   string `json:"u"`
	Public string `json:"g"`
}

// decodePosition decodes a feed or read-all cursor. Cursors are not secret
// (docs/functions.md): the check that keeps one inside the query is that
// each position is a message sort key (m#…) or "" — the partitions are the
// route's own, never the cursor's.
func (s *Store) decodePosition(scope, token string) (feedPosition, error) {
	pos, err := ddb.DecodeCursor[feedPosition](s.codec, scope, token)
	if err != nil {
		return feedPosition{}, err
	}
	for _, p := range []string{pos.User, pos.Public} {
		if p != "" && (!strings.HasPrefix(p, contract.PrefixMessage) || len(p) > len(contract.PrefixMessage)+messageIDLen+1) {
			return feedPosition{}, ddb.ErrInvalidCursor
		}
	}
	return pos, nil
}

func feedScope(tenant, inbox, uid string) string {
	// Key parts contain no '#', so the scope cannot be re-split.
	return "stak/feed/" + tenant + "#" + inbox + "#" + uid
}

// Feed returns uid's messages in inbox newest first: the user partition
// (user messages and receipts) merged with the public partition, public
// messages carrying the user's readat from their receipt. Items past
// expiredat are hidden. A page is full unless it is the last, and Next is
// set only when another message exists, so a client never follows a
// cursor to an empty page.
func (s *Store) Feed(ctx context.Context, tenant, inbox, uid, after string, limit int) (*Page, error) {
	if _, err := s.Inbox(ctx, tenant, inbox); err != nil {
		return nil, err
	}
	scope := feedScope(tenant, inbox, uid)
	user, public, err := s.sources(tenant, inbox, uid, scope, after, feedPosition{}, limit)
	if err != nil {
		return nil, err
	}
	page := &Page{Messages: []Message{}}
	size := pageOverhead
	for len(page.Messages) < limit {
		// A message that would push the page past MaxPageBytes starts the
		// next page instead, from the positions before it (a page always
		// holds at least one; one item is at most 400 KB).
		userPos, publicPos := user.pos, public.pos
		m, err := next(ctx, user, public)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return page, nil
		}
		n, err := escapedSize(m)
		if err != nil {
			return nil, err
		}
		if len(page.Messages) > 0 && size+n > MaxPageBytes {
			// m exists, so there is a next page; it starts at m.
			page.Next, err = ddb.EncodeCursor(s.codec, scope, feedPosition{User: userPos, Public: publicPos})
			return page, err
		}
		size += n
		page.Messages = append(page.Messages, *m)
	}
	more, err := hasNext(ctx, user, public)
	if err != nil || !more {
		return page, err
	}
	page.Next, err = ddb.EncodeCursor(s.codec, scope, feedPosition{User: user.pos, Public: public.pos})
	return page, err
}

// pageOverhead is a page's JSON without its messages, cursor included.
const pageOverhead = 64 + 2*ddb.MaxCursorLen

// escapedSize is the size of m's JSON inside a page as API Gateway's
// payload carries it: a JSON string, in which quotes, backslashes and
// control characters are escaped, plus the comma.
func escapedSize(m *Message) (int, error) {
	b, err := api.Marshal(m)
	if err != nil {
		return 0, fmt.Errorf("stak: measure message: %w", err)
	}
	n := 1
	for _, c := range b[:len(b)-1] {
		switch {
		case c == '"' || c == '\\':
			n += 2
		case c < 0x20:
			n += 6
		default:
			n++
		}
	}
	return n, nil
}

// next takes the newest message of either partition; nil at the end.
func next(ctx context.Context, user, public *source) (*Message, error) {
	if err := skipOrphans(ctx, user, public); err != nil {
		return nil, err
	}
	u, err := user.head(ctx)
	if err != nil {
		return nil, err
	}
	g, err := public.head(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case u == nil && g == nil:
		return nil, nil
	case g == nil || (u != nil && sortKey(u) > sortKey(g)):
		user.pop()
		return unmarshalMessage(u)
	case u == nil || sortKey(g) > sortKey(u):
		public.pop()
		return unmarshalMessage(g)
	}
	// Same id in both: ids are unique across an inbox, so the user item is
	// this public message's read receipt.
	user.pop()
	public.pop()
	m, err := unmarshalMessage(g)
	if err != nil {
		return nil, err
	}
	if readAt, ok := numberAttr(u, contract.AttrReadAt); ok {
		m.ReadAt = &readAt
	}
	return m, nil
}

// skipOrphans drops receipts at the head of the user partition whose
// public message is gone: they have nothing to show.
func skipOrphans(ctx context.Context, user, public *source) error {
	for {
		u, err := user.head(ctx)
		if err != nil || u == nil || !isReceipt(u) {
			return err
		}
		g, err := public.head(ctx)
		if err != nil {
			return err
		}
		if g != nil && sortKey(g) >= sortKey(u) {
			return nil
		}
		user.pop()
	}
}

func hasNext(ctx context.Context, user, public *source) (bool, error) {
	if err := skipOrphans(ctx, user, public); err != nil {
		return false, err
	}
	for _, src := range []*source{user, public} {
		h, err := src.head(ctx)
		if err != nil || h != nil {
			return h != nil, err
		}
	}
	return false, nil
}

func sortKey(item map[string]types.AttributeValue) string {
	var sk string
	_ = attributevalue.Unmarshal(item[contract.AttrSK], &sk)
	return sk
}

// source reads one partition's m# items newest first, a buffer at a time.
// sources opens the user and the public partition of uid's view of inbox
// at the cursor after, decoded in scope, or at start when after is empty.
func (s *Store) sources(tenant, inbox, uid, scope, after string, start feedPosition, limit int) (user, public *source, err error) {
	pos := start
	if after != "" {
		if pos, err = s.decodePosition(scope, after); err != nil {
			return nil, nil, err
		}
	}
	now := s.now().Unix()
	user = &source{s: s, pk: contract.UserPK(tenant, uid, inbox), pos: pos.User, now: now, limit: limit}
	public = &source{s: s, pk: contract.PublicPK(tenant, inbox), pos: pos.Public, now: now, limit: limit}
	return user, public, nil
}

type source struct {
	s     *Store
	pk    string
	pos   string // sk of the last item popped (or the cursor's), "" = top
	now   int64
	limit int

	buf       []map[string]types.AttributeValue
	start     map[string]types.AttributeValue
	began     bool
	exhausted bool
}

// head returns the next live item without taking it; nil at the end.
// The filter drops expired items after Limit is applied, so a query can
// return nothing yet have more: keep going on LastEvaluatedKey.
func (src *source) head(ctx context.Context) (map[string]types.AttributeValue, error) {
	for len(src.buf) == 0 && !src.exhausted {
		if !src.began {
			src.began = true
			if src.pos != "" {
				src.start = key(src.pk, src.pos)
			}
		}
		e := prefixQuery(src.pk, contract.PrefixMessage)
		e.Filter = "#expiredat > :now"
		e.Names["#expiredat"], e.Values[":now"] = contract.AttrExpiredAt, ddb.N(src.now)
		in := e.Query(src.s.table)
		in.ScanIndexForward = aws.Bool(false)
		in.ConsistentRead = aws.Bool(true)
		in.Limit = aws.Int32(int32(src.limit + 1))
		in.ExclusiveStartKey = src.start
		out, err := src.s.client.Query(ctx, in)
		if err != nil {
			return nil, ddb.Wrap("Query", err)
		}
		src.buf = out.Items
		src.start = out.LastEvaluatedKey
		src.exhausted = len(out.LastEvaluatedKey) == 0
	}
	if len(src.buf) == 0 {
		return nil, nil
	}
	return src.buf[0], nil
}

func (src *source) pop() {
	src.pos = sortKey(src.buf[0])
	src.buf = src.buf[1:]
}
