package stak_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/services/stak"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// partitionItems are the sort keys of every item of a partition.
func (s *service) partitionItems(t testing.TB, pk string) []string {
	t.Helper()
	out, err := s.Client.Query(context.Background(), &dynamodb.QueryInput{
		TableName: aws.String(s.Table), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": stakcontract.AttrPK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
	})
	require.NoError(t, err, "Query %s", pk)
	sks := []string{}
	for _, item := range out.Items {
		sks = append(sks, item[stakcontract.AttrSK].(*types.AttributeValueMemberS).Value)
	}
	return sks
}

func (s *service) markRead(t testing.TB, uid, id string) {
	t.Helper()
	s.Must(t, 200, stakcontract.MarkRead.Method, stakcontract.MarkRead.URL("acme", "main", uid, id), "", nil)
}

func TestEraseUser(t *testing.T) {
	s := newService(t)
	s.setup(t)
	s.Must(t, 200, stakcontract.PutInbox.Method, stakcontract.PutInbox.URL("acme", "second"), `{"title":"Second","description":"","ttl":{"default":"7d"}}`, nil)
	both := s.toUsers(t, "to both", "billing", "u1", "u2")
	s.toUsers(t, "to u1", "", "u1")
	s.toUsers(t, "to u1 too", "billing", "u1")
	pub := s.toEveryone(t, "to all", "news")
	s.markRead(t, "u1", both.Header.ID)
	s.markRead(t, "u1", pub.Header.ID) // a receipt in u1's partition
	s.markRead(t, "u2", both.Header.ID)
	s.Must(t, 201, stakcontract.Publish.Method, stakcontract.Publish.URL("acme", "second"),
		`{"sender":"s","audiences":{"kind":"users","uids":["u1"]},"message":{"title":"elsewhere"}}`, nil)
	// A stream marker of the consumer, as an expiry leaves one.
	_, err := s.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(s.Table), Item: map[string]types.AttributeValue{
		stakcontract.AttrPK: &types.AttributeValueMemberS{Value: stakcontract.UserPK("acme", "u1", "main")},
		stakcontract.AttrSK: &types.AttributeValueMemberS{Value: stakcontract.PrefixMarker + "event-1"},
	}})
	require.NoError(t, err, "marker")
	// Stats merge the user's counters with the public ones: u2 has "to
	// both" (read) and "to all".
	u2Before := s.stats(t, "u2")
	require.Equal(t, counts(2, 1), u2Before.Counts, "u2 before")

	eraser := stak.NewEraser(s.Client, s.Table)
	res, err := eraser.EraseUser(t.Context(), "acme", "u1")
	require.NoError(t, err)
	assert.True(t, res.Done(), "unsettled: %v", res.Unsettled)
	assert.ElementsMatch(t, []string{"main", "second"}, res.Inboxes, "inboxes")
	assert.Equal(t, 4, res.Messages, "messages deleted (3 in main, 1 in second)")
	assert.Equal(t, 1, res.Receipts, "receipts deleted")
	assert.Equal(t, 4, res.Counters, "counters deleted (main c#*, c#billing, c#news: the read of the public message; second c#*)")
	assert.Equal(t, 1, res.Markers, "markers deleted")
	for _, inbox := range []string{"main", "second"} {
		assert.Empty(t, s.partitionItems(t, stakcontract.UserPK("acme", "u1", inbox)), "u1's partition of %s", inbox)
	}
	// Nothing of u1's own is left; the public message still counts, now
	// unread, since u1's receipt went with the rest.
	assert.Equal(t, counts(1, 0), s.stats(t, "u1").Counts, "u1 after")
	assert.Equal(t, u2Before, s.stats(t, "u2"), "u2's counters untouched")
	assert.Empty(t, s.recount(t, `{"uid":"u2"}`).Changes, "u2's counters against a recount")
	var feed struct {
		Messages []map[string]any `json:"messages"`
	}
	s.Must(t, 200, stakcontract.Feed.Method, stakcontract.Feed.URL("acme", "main", "u2"), "", &feed)
	assert.Len(t, feed.Messages, 2, "u2 keeps its copy and the public message")

	again, err := eraser.EraseUser(t.Context(), "acme", "u1")
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0, 0, 0}, []int{again.Messages, again.Receipts, again.Counters, again.Markers}, "a second run deletes nothing")
	assert.True(t, again.Done(), "second run")

	_, err = eraser.EraseUser(t.Context(), "acme", stakcontract.PublicUID)
	assert.ErrorIs(t, err, stak.ErrInvalidKey, "the public partition is no user")
	_, err = eraser.EraseUser(t.Context(), "acme", "a#b")
	assert.ErrorIs(t, err, stak.ErrInvalidKey, "a uid with '#'")
}

// Publishes to the erased user and to others, and marks, run while the
// erasure runs: every counter equals a recount afterwards, the erased
// user's included, and once the publishes stop one more erasure leaves
// nothing of the user.
func TestEraseUserRaces(t *testing.T) {
	s := newService(t)
	s.setup(t)
	audiences := [][]string{{"u1", "u2"}, {"u2"}, {"u3", "u1"}, {"u1"}}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []string
		sent = map[string]int{}
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		errs = append(errs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for w, uids := range audiences {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 12 {
				b := fmt.Sprintf(`{"sender":"s","audiences":{"kind":"users","uids":["%s"]},"taxonomy":{"category":"c%d"},"message":{"title":"w%d-%d"}}`, strings.Join(uids, `","`), i%3, w, i)
				r := s.Do(t, stakcontract.Publish.Method, stakcontract.Publish.URL("acme", "main"), b)
				var p stak.Published
				if r.Status != 201 || json.Unmarshal([]byte(r.Body), &p) != nil {
					fail("publish: %d %s", r.Status, r.Body)
					continue
				}
				mu.Lock()
				for _, u := range uids {
					sent[u]++
				}
				mu.Unlock()
				// u1 reads half of what it gets while it is being erased: a
				// mark that races with a delete must not count twice.
				if i%2 == 0 {
					for _, u := range uids {
						if r := s.Do(t, stakcontract.MarkRead.Method, stakcontract.MarkRead.URL("acme", "main", u, p.Header.ID), ""); r.Status != 200 && r.Status != 404 {
							fail("mark %s: %d %s", u, r.Status, r.Body)
						}
					}
				}
			}
		}()
	}
	done := make(chan struct{})
	erasures := make(chan *stak.Erasure, 1000)
	var erasing sync.WaitGroup
	erasing.Add(1)
	go func() {
		defer erasing.Done()
		eraser := stak.NewEraser(s.Client, s.Table)
		for {
			res, err := eraser.EraseUser(context.Background(), "acme", "u1")
			if err != nil {
				fail("erase: %v", err)
				return
			}
			erasures <- res
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	wg.Wait()
	close(done)
	erasing.Wait()
	close(erasures)
	require.Empty(t, errs, "failed calls")
	deleted, runs := 0, 0
	for res := range erasures {
		deleted += res.Messages
		runs++
	}
	t.Logf("erasures during the publishes: %d, messages deleted: %d", runs, deleted)
	require.Positive(t, deleted, "the erasure ran while messages arrived")

	// Exact under the race: no counter differs from its items, u1's
	// (what is left of it) included.
	for _, u := range []string{"u1", "u2", "u3"} {
		assert.Empty(t, s.recount(t, fmt.Sprintf(`{"uid":%q}`, u)).Changes, "%s's counters against a recount", u)
	}
	assert.Equal(t, int64(sent["u2"]), s.stats(t, "u2").Counts.Published, "u2 published")
	assert.Equal(t, int64(sent["u3"]), s.stats(t, "u3").Counts.Published, "u3 published")

	res, err := stak.NewEraser(s.Client, s.Table).EraseUser(t.Context(), "acme", "u1")
	require.NoError(t, err)
	assert.True(t, res.Done(), "final erasure: unsettled %v", res.Unsettled)
	assert.Empty(t, s.partitionItems(t, stakcontract.UserPK("acme", "u1", "main")), "u1's partition after the final erasure")
	assert.Equal(t, counts(0, 0), s.stats(t, "u1").Counts, "u1's stats")
	for _, u := range []string{"u2", "u3"} {
		assert.Empty(t, s.recount(t, fmt.Sprintf(`{"uid":%q}`, u)).Changes, "%s's counters after the final erasure", u)
	}
}
