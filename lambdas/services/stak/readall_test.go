package stak_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

var readAllPath = contract.ReadAll.URL("acme", "main", "u1")

func (s *service) readAll(t testing.TB, uid, body string) stak.ReadAll {
	t.Helper()
	var r stak.ReadAll
	s.MustRoute(t, 200, contract.ReadAll, body, &r, "acme", "main", uid)
	return r
}

// unreadTitles lists the titles of uid's unread messages, newest first.
func (s *service) unreadTitles(t *testing.T, uid string) string {
	t.Helper()
	var out []string
	for _, m := range s.feed(t, uid, "?limit=100").Messages {
		if m.ReadAt == nil {
			out = append(out, m.Message.Title)
		}
	}
	return strings.Join(out, ",")
}

func TestReadAll(t *testing.T) {
	s := newService(t)
	s.setup(t)
	var ids []string // oldest first
	for i, cat := range []string{"a", "b", "", "a", "b", "", "a"} {
		if i%2 == 0 {
			ids = append(ids, s.toUsers(t, fmt.Sprint("m", i), cat, "u1", "u2").Header.ID)
		} else {
			ids = append(ids, s.toEveryone(t, fmt.Sprint("m", i), cat).Header.ID)
		}
	}
	s.MustRoute(t, 200, contract.MarkRead, "", nil, "acme", "main", "u1", ids[5])

	before := s.Count(t)
	for name, body := range map[string]string{
		"empty body":       ``,
		"unknown field":    `{"all":true}`,
		"bad id":           `{"up_to":"nope"}`,
		"negative time":    `{"up_to_time":-1}`,
		"time past 9999":   fmt.Sprintf(`{"up_to_time":%d}`, int64(api.MaxEpochSeconds)+1),
		"overflowing time": `{"up_to_time":9300000000000000}`,
		"both bounds":      `{"up_to":"` + ids[3] + `","up_to_time":1}`,
		"limit 0":          `{"limit":0}`,
		"limit too large":  fmt.Sprintf(`{"limit":%d}`, stak.MaxReadAll+1),
		"cursor":           `{"cursor":"abc"}`,
		"cursor + bound":   `{"cursor":"abc","up_to":"` + ids[3] + `"}`,
	} {
		r := s.Do(t, "POST", readAllPath, body)
		assert.Equal(t, 400, r.Status, "%s: %s", name, r.Body)
	}
	for _, path := range []string{contract.ReadAll.URL("acme", "main", "a#b"), contract.ReadAll.URL("acme", "main", "$public")} {
		assert.Equal(t, 400, s.Do(t, "POST", path, `{}`).Status, "%s", path)
	}
	s.MustRoute(t, 404, contract.ReadAll, `{}`, nil, "acme", "nope", "u1")
	require.Equal(t, before, s.Count(t), "items: refused calls wrote")

	// Bound by id: m3 and older; newest first, 2 per call.
	r := s.readAll(t, "u1", `{"up_to":"`+ids[3]+`","limit":2}`)
	require.Equal(t, 2, r.Marked, "first call: marked")
	require.Equal(t, 2, r.Examined, "first call: examined")
	require.NotEmpty(t, r.Next, "first call: cursor")
	assert.Equal(t, "m6,m4,m1,m0", s.unreadTitles(t, "u1"), "unread after m3,m2")
	r = s.readAll(t, "u1", `{"cursor":"`+r.Next+`","limit":2}`)
	require.Equal(t, 2, r.Marked, "second call: the last two")
	require.Empty(t, r.Next, "second call: cursor")
	// A cursor belongs to its user and route.
	other := s.readAll(t, "u2", `{"limit":1}`)
	assert.Equal(t, 400, s.Do(t, "POST", readAllPath, `{"cursor":"`+other.Next+`"}`).Status, "u2's cursor for u1")
	assert.Equal(t, 400, s.Do(t, contract.Feed.Method, contract.Feed.URL("acme", "main", "u2")+"?cursor="+other.Next, "").Status, "read-all cursor on the feed")

	// Bound by time: everything delivered up to m4's second, which may
	// include later messages of the same second but never m6's id if it is
	// a later second; so check against the ids instead of the titles.
	var m4 stak.Message
	for _, m := range s.feed(t, "u1", "?limit=100").Messages {
		if m.Header.ID == ids[4] {
			m4 = m
		}
	}
	r = s.readAll(t, "u1", fmt.Sprintf(`{"up_to_time":%d}`, m4.Header.Delivered))
	assert.NotContains(t, s.unreadTitles(t, "u1"), "m4", "unread after up_to_time of m4")
	assert.GreaterOrEqual(t, r.Marked, 1, "marked by up_to_time of m4")
	// The latest time accepted is a bound that marks the rest (up to
	// 9.2e15 it overflowed into one that marked nothing).
	s.readAll(t, "u1", fmt.Sprintf(`{"up_to_time":%d}`, int64(api.MaxEpochSeconds)))
	assert.Empty(t, s.unreadTitles(t, "u1"), "unread after read-all")
	r = s.readAll(t, "u1", `{}`)
	assert.Equal(t, 0, r.Marked, "read-all of a read inbox: marked")
	assert.Equal(t, 7, r.Examined, "read-all of a read inbox: examined")
	assert.Empty(t, r.Next, "read-all of a read inbox: cursor")
	st := s.stats(t, "u1")
	assert.Equal(t, counts(7, 7), st.Counts, "u1")
	assert.Equal(t, counts(3, 3), st.Categories["a"], "u1 a")
	assert.Equal(t, counts(2, 2), st.Categories["b"], "u1 b")
	// u2 marked m6 only; its counters count nothing of u1's.
	assert.Equal(t, counts(7, 1), s.stats(t, "u2").Counts, "u2")
}

// TestReadAllHidesExpired: an expired message is not marked (a single mark
// answers 404 for it too) and does not count.
func TestReadAllSkipsExpired(t *testing.T) {
	s := newService(t)
	s.setup(t)
	s.toUsers(t, "flash", "flash", "u1")
	s.toEveryone(t, "pflash", "flash")
	s.toUsers(t, "keep", "a", "u1")
	s.clock.Advance(2 * time.Minute)
	r := s.readAll(t, "u1", `{}`)
	assert.Equal(t, 1, r.Marked, "read-all: only keep marked")
	assert.Equal(t, 1, r.Examined, "read-all: only keep examined")
	assert.Equal(t, counts(3, 1), s.stats(t, "u1").Counts, "u1")
}

// TestReadAllRaces: read-all calls racing with each other and with single
// marks of the same messages count every read exactly once, and every
// message is marked by exactly one caller.
func TestReadAllRaces(t *testing.T) {
	s := newService(t)
	s.setup(t)
	var ids []string
	cats := []string{"a", "b", "c", ""}
	for i := range 60 {
		if i%3 == 0 {
			ids = append(ids, s.toEveryone(t, fmt.Sprint("p", i), cats[i%4]).Header.ID)
		} else {
			ids = append(ids, s.toUsers(t, fmt.Sprint("u", i), cats[i%4], "u1").Header.ID)
		}
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		changed int
		errs    []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		errs = append(errs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	// do retries a 503 as a client does (its Retry-After shortened), a
	// few times: twelve callers on one user's counters conflict, and on a
	// loaded machine a transaction can lose every one of the SDK's
	// attempts. A call still 503 after the retries fails the test.
	var unavailable atomic.Int64
	do := func(method, path, body string) apitest.Response {
		for attempt := 1; ; attempt++ {
			r := s.Do(t, method, path, body)
			if r.Status != http.StatusServiceUnavailable || attempt == 6 {
				return r
			}
			unavailable.Add(1)
			time.Sleep(time.Duration(attempt) * 25 * time.Millisecond)
		}
	}
	defer func() { t.Logf("503s retried: %d", unavailable.Load()) }()
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"limit":%d}`, 5+w*3)
			for range 100 {
				r := do("POST", readAllPath, body)
				var res stak.ReadAll
				if r.Status != 200 || json.Unmarshal([]byte(r.Body), &res) != nil {
					fail("read-all: %d %s", r.Status, r.Body)
					return
				}
				mu.Lock()
				changed += res.Marked
				mu.Unlock()
				if res.Next == "" {
					return
				}
				body = fmt.Sprintf(`{"cursor":%q}`, res.Next)
			}
		}()
	}
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			order := rand.New(rand.NewPCG(uint64(w), 1)).Perm(len(ids))
			for _, i := range order {
				r := do(contract.MarkRead.Method, contract.MarkRead.URL("acme", "main", "u1", ids[i]), "")
				var res stak.ReadResult
				if r.Status != 200 || json.Unmarshal([]byte(r.Body), &res) != nil {
					fail("mark %s: %d %s", ids[i], r.Status, r.Body)
					continue
				}
				if res.Changed {
					mu.Lock()
					changed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	require.Empty(t, errs, "failed calls")
	// Each message's mark is reported once, unless the call that made it
	// answered 503 (its deadline passed after DynamoDB applied it) and the
	// retry found it done: never twice, and short by no more than the 503s.
	assert.LessOrEqual(t, changed, len(ids), "marks the callers report for the messages: none twice")
	assert.GreaterOrEqual(t, int64(changed), int64(len(ids))-unavailable.Load(), "marks the callers report for the messages, less those behind a retried 503")
	st := s.stats(t, "u1")
	assert.Equal(t, counts(60, 60), st.Counts, "u1")
	for _, c := range []string{"a", "b", "c"} {
		assert.Equal(t, counts(15, 15), st.Categories[c], "u1 "+c)
	}
	assert.Empty(t, s.unreadTitles(t, "u1"), "still unread")
}

// breakCounter overwrites one counter item as a lost stream record or a
// bad hand edit would leave it.
func (s *service) breakCounter(t testing.TB, pk, sk string, published, read int) {
	t.Helper()
	item := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk},
		"kind": &types.AttributeValueMemberS{Value: "US"}, "published": &types.AttributeValueMemberN{Value: fmt.Sprint(published)},
	}
	if read >= 0 {
		item["read"] = &types.AttributeValueMemberN{Value: fmt.Sprint(read)}
	}
	_, err := s.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(s.Table), Item: item})
	require.NoError(t, err, "PutItem %s %s", pk, sk)
}

func (s *service) deleteCounter(t *testing.T, pk, sk string) {
	t.Helper()
	_, err := s.Client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(s.Table), Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk},
	}})
	require.NoError(t, err, "DeleteItem %s %s", pk, sk)
}

const (
	u1PK     = "t#acmeU#u1#main"
	publicPK = "t#acmeG#$public#main"
)

func (s *service) recount(t testing.TB, body string) stak.Recount {
	t.Helper()
	var r stak.Recount
	s.MustRoute(t, 200, contract.Recount, body, &r, "acme", "main")
	return r
}

func TestRecount(t *testing.T) {
	s := newService(t)
	s.setup(t)
	for i := range 6 {
		um := s.toUsers(t, fmt.Sprint("u", i), []string{"a", "b"}[i%2], "u1", "u2")
		if i < 3 {
			s.MustRoute(t, 200, contract.MarkRead, "", nil, "acme", "main", "u1", um.Header.ID)
		}
		pm := s.toEveryone(t, fmt.Sprint("p", i), "a")
		if i == 0 {
			s.MustRoute(t, 200, contract.MarkRead, "", nil, "acme", "main", "u1", pm.Header.ID)
		}
	}
	// Correct counters: a recount changes nothing and creates nothing.
	items := s.Count(t)
	rc := s.recount(t, `{"uid":"u1"}`)
	require.Empty(t, rc.Changes, "recount of right counters: changes")
	require.Equal(t, 13, rc.Examined, "recount of right counters: examined")
	require.Equal(t, items, s.Count(t), "items: recount wrote")
	assert.Equal(t, counts(12, 4), s.stats(t, "u1").Counts, "u1")

	// Break: lost increments, lost decrements, a deleted category counter,
	// a public counter far off.
	s.breakCounter(t, u1PK, "c#*", 2, 9)
	s.deleteCounter(t, u1PK, "c#b")
	s.breakCounter(t, publicPK, "c#*", 40, -1)
	s.breakCounter(t, u1PK, "c#ghost", 3, 1)
	st := s.stats(t, "u1")
	require.NotEqual(t, int64(12), st.Published, "counter not broken")
	r := s.recount(t, `{"uid":"u1"}`)
	got := map[string]string{}
	for _, c := range r.Changes {
		got[c.Partition+"/"+c.Category] = fmt.Sprintf("%d/%d->%d/%d", c.Before.Published, c.Before.Read, c.After.Published, c.After.Read)
	}
	want := map[string]string{
		"public/": "40/0->6/0", "user/": "2/9->6/4", "user/b": "0/0->3/1", "user/ghost": "3/1->0/0",
	}
	assert.Equal(t, want, got, "changes")
	st = s.stats(t, "u1")
	assert.Equal(t, counts(12, 4), st.Counts, "u1")
	assert.Equal(t, counts(9, 3), st.Categories["a"], "u1 a")
	assert.Equal(t, counts(3, 1), st.Categories["b"], "u1 b")
	assert.Equal(t, counts(0, 0), st.Categories["ghost"], "u1 ghost")
	assert.Empty(t, s.recount(t, `{"uid":"u1"}`).Changes, "second recount changed")
	// Without uid only the public counters; u2 was never broken.
	rc = s.recount(t, `{}`)
	assert.Empty(t, rc.Changes, "public recount: changes")
	assert.Empty(t, rc.UID, "public recount: uid")
	assert.Equal(t, counts(12, 0), s.stats(t, "u2").Counts, "u2")

	before := s.Count(t)
	for name, tc := range map[string]struct {
		path, body string
		status     int
	}{
		"empty body":    {contract.Recount.URL("acme", "main"), ``, 400},
		"uid with #":    {contract.Recount.URL("acme", "main"), `{"uid":"a#b"}`, 400},
		"uid $public":   {contract.Recount.URL("acme", "main"), `{"uid":"$public"}`, 400},
		"unknown field": {contract.Recount.URL("acme", "main"), `{"user":"u1"}`, 400},
		"unknown inbox": {contract.Recount.URL("acme", "nope"), `{"uid":"u1"}`, 404},
		"bad tenant":    {contract.Recount.URL("a#b", "main"), `{}`, 400},
	} {
		r := s.Do(t, "POST", tc.path, tc.body)
		assert.Equal(t, tc.status, r.Status, "%s: %s", name, r.Body)
	}
	assert.Equal(t, before, s.Count(t), "items: refused recounts wrote")
}

// TestRecountRaces: recounts running while messages are published and
// marked leave counters exact: each recount write is conditioned on the
// counter it read, so a write that raced with it makes it count again.
func TestRecountRaces(t *testing.T) {
	s := newService(t)
	s.setup(t)
	s.breakCounter(t, u1PK, "c#*", 100, 50)
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		errs      []string
		published = make(chan string, 200)
		attempts  int
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		errs = append(errs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				body := fmt.Sprintf(`{"sender":"s","audiences":{"kind":"users","uids":["u1"]},"taxonomy":{"category":"c%d"},"message":{"title":"w%d-%d"}}`, i%3, w, i)
				if w == 0 {
					body = fmt.Sprintf(`{"sender":"s","audiences":{"kind":"everyone"},"taxonomy":{"category":"c%d"},"message":{"title":"w%d-%d"}}`, i%3, w, i)
				}
				r := s.Do(t, contract.Publish.Method, contract.Publish.URL("acme", "main"), body)
				var p stak.Published
				if r.Status != 201 || json.Unmarshal([]byte(r.Body), &p) != nil {
					fail("publish: %d %s", r.Status, r.Body)
					continue
				}
				published <- p.Header.ID
			}
		}()
	}
	var markers sync.WaitGroup
	for range 2 {
		markers.Add(1)
		go func() {
			defer markers.Done()
			for id := range published {
				if r := s.Do(t, contract.MarkRead.Method, contract.MarkRead.URL("acme", "main", "u1", id), ""); r.Status != 200 {
					fail("mark: %d %s", r.Status, r.Body)
				}
			}
		}()
	}
	done := make(chan struct{})
	var recounters sync.WaitGroup
	for range 2 {
		recounters.Add(1)
		go func() {
			defer recounters.Done()
			for {
				r := s.Do(t, contract.Recount.Method, contract.Recount.URL("acme", "main"), `{"uid":"u1"}`)
				var res stak.Recount
				if r.Status != 200 || json.Unmarshal([]byte(r.Body), &res) != nil {
					fail("recount: %d %s", r.Status, r.Body)
					return
				}
				mu.Lock()
				attempts += res.Attempts
				mu.Unlock()
				select {
				case <-done:
					return
				default:
				}
			}
		}()
	}
	wg.Wait()
	close(published)
	markers.Wait()
	close(done)
	recounters.Wait()
	require.Empty(t, errs, "failed calls")
	t.Logf("recount passes: %d", attempts)
	st := s.stats(t, "u1")
	assert.Equal(t, counts(45, 45), st.Counts, "u1")
	for i := range 3 {
		assert.Equal(t, counts(15, 15), st.Categories[fmt.Sprint("c", i)], fmt.Sprint("u1 c", i))
	}
	assert.Empty(t, s.recount(t, `{"uid":"u1"}`).Changes, "counters after the race were off")
}
