package stak_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

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

func TestHostileInput(t *testing.T) {
	s := newService(t)
	s.setup(t)
	const publish = `{"sender":"admin","audiences":{"kind":"users","uids":["u1"]},"message":{"title":"t","body":{"n":1}}}`
	s.Hostile(t, s.api,
		apitest.Write{Method: contract.PutTenant.Method, Path: contract.PutTenant.URL("acme"), Body: `{"title":"Acme","ttl":"10d"}`},
		apitest.Write{Method: contract.PutInbox.Method, Path: contract.PutInbox.URL("acme", "main"), Body: `{"title":"Main","ttl":{"default":"7d"}}`},
		apitest.Write{Method: contract.Publish.Method, Path: contract.Publish.URL("acme", "main"), Body: publish},
		apitest.Write{Method: contract.Publish.Method, Path: contract.Publish.URL("acme", "main"), Body: `{"sender":"admin","message":{"title":"t","body":1},"audiences":{"kind":"everyone"}}`, Doc: "message"},
		apitest.Write{Method: contract.ReadAll.Method, Path: contract.ReadAll.URL("acme", "main", "u1"), Body: `{"cursor":"","limit":5}`},
		apitest.Write{Method: contract.Recount.Method, Path: contract.Recount.URL("acme", "main"), Body: `{"uid":"u1"}`},
	)

	// The body is free-form: its own limits, at the depth it is stored.
	for _, tt := range []struct {
		name, body string
		status     int
	}{
		// The item is level 1 and message level 2 (DynamoDB's count).
		{"body 30 levels deep", strings.Repeat("[", 30) + strings.Repeat("]", 30), 201},
		{"body 31 levels deep", strings.Repeat("[", 31) + strings.Repeat("]", 31), 400},
		{"body 1e400", `1e400`, 400},
		{"body over MaxBodyBytes", `"` + strings.Repeat("x", stak.MaxBodyBytes) + `"`, 413},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := s.Digest(t)
			r := s.Do(t, contract.Publish.Method, contract.Publish.URL("acme", "main"), `{"sender":"admin","audiences":{"kind":"users","uids":["u9"]},"message":{"title":"t","body":`+tt.body+`}}`)
			require.Equal(t, tt.status, r.Status, "status: %.300s", r.Body)
			if tt.status >= 400 {
				assert.Equal(t, before, s.Digest(t), "a refused publish changed the table")
			}
		})
	}
}

// TestBodyKeptExactly: numbers keep every digit through DynamoDB and back,
// and HTML is sent as is, not as \u003c.
func TestBodyKeptExactly(t *testing.T) {
	s := newService(t)
	s.setup(t)
	const body = `{"big":12345678901234567890123,"small":1.50,"neg":-0.000001,"html":"<b>&amp;</b>","list":[1e5,99999999999999999999999999999999999999]}`
	r := s.Do(t, contract.Publish.Method, contract.Publish.URL("acme", "main"), `{"sender":"admin","audiences":{"kind":"users","uids":["u1"]},"message":{"title":"<i>","body":`+body+`}}`)
	require.Equal(t, 201, r.Status, "publish: %s", r.Body)
	for _, want := range []string{"12345678901234567890123", "99999999999999999999999999999999999999", `"<b>&amp;</b>"`, `"<i>"`} {
		assert.Contains(t, string(r.Body), want, "publish answer")
	}
	feed := s.Do(t, contract.Feed.Method, contract.Feed.URL("acme", "main", "u1"), "")
	for _, want := range []string{"12345678901234567890123", "99999999999999999999999999999999999999", `"<b>&amp;</b>"`} {
		assert.Contains(t, string(feed.Body), want, "feed")
	}
	assert.NotContains(t, string(feed.Body), `\u003c`, "feed altered the body")
	assert.NotContains(t, string(feed.Body), "e+22", "feed altered the body")
	// Stored as DynamoDB numbers, digit for digit.
	out, err := s.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(s.Table)})
	require.NoError(t, err, "scan")
	found := false
	for _, it := range out.Items {
		m, ok := it["message"].(*types.AttributeValueMemberM)
		if !ok {
			continue
		}
		b := m.Value["body"].(*types.AttributeValueMemberM)
		if n, ok := b.Value["big"].(*types.AttributeValueMemberN); ok && n.Value == "12345678901234567890123" {
			found = true
		}
	}
	assert.True(t, found, "no stored body with big = N 12345678901234567890123")
}

// TestFeedPageBytes: items written before the body cap (up to DynamoDB's
// 400 KB) cannot make a page exceed Lambda's 6 MB response limit: the page
// stops at MaxPageBytes, and the cursor walks every message exactly once.
func TestFeedPageBytes(t *testing.T) {
	s := newService(t)
	s.setup(t)
	const n = 30
	big := strings.Repeat(`"`, 150<<10) // escaped, each quote is 2 bytes
	for i := range n {
		p := s.toUsers(t, fmt.Sprintf("m%02d", i), "", "u1")
		_ = p
	}
	out, err := s.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(s.Table)})
	require.NoError(t, err, "scan")
	for _, it := range out.Items {
		if k, ok := it["kind"].(*types.AttributeValueMemberS); !ok || k.Value != "UM" {
			continue
		}
		_, err := s.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.Table),
			Key:                       map[string]types.AttributeValue{"pk": it["pk"], "sk": it["sk"]},
			UpdateExpression:          aws.String("SET #m.#b = :b"),
			ExpressionAttributeNames:  map[string]string{"#m": "message", "#b": "body"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":b": &types.AttributeValueMemberS{Value: big}},
		})
		require.NoError(t, err, "UpdateItem")
	}
	seen := map[string]bool{}
	q, pages := "?limit=100", 0
	for {
		r := s.Do(t, contract.Feed.Method, contract.Feed.URL("acme", "main", "u1")+q, "")
		require.Equal(t, 200, r.Status, "page %d: %.200s", pages, r.Body)
		escaped, _ := json.Marshal(string(r.Body))
		assert.LessOrEqual(t, len(escaped), stak.MaxPageBytes, "page %d: bytes as a JSON string", pages)
		var p struct {
			Messages []stak.Message `json:"messages"`
			Next     string         `json:"next_cursor"`
		}
		r.JSON(t, &p)
		pages++
		for _, m := range p.Messages {
			assert.False(t, seen[m.Message.Title], "%s on two pages", m.Message.Title)
			seen[m.Message.Title] = true
		}
		if p.Next == "" {
			break
		}
		q = "?limit=100&cursor=" + p.Next
	}
	assert.Len(t, seen, n, "messages")
	assert.GreaterOrEqual(t, pages, 2, "pages")
}

// Names the caller chose are echoed cut at 64 characters, and at most
// api.MaxFieldErrors of them: TTL type keys of 3,000 characters once came
// back whole.
func TestEchoedNamesAreCut(t *testing.T) {
	s := newService(t)
	s.setup(t)
	var ttl []string
	for i := range 15 { // 45 KB, under the 64 KiB body limit
		ttl = append(ttl, fmt.Sprintf(`"%s#%d":"1d"`, strings.Repeat("k", 3000), i))
	}
	r := s.Do(t, contract.PutInbox.Method, contract.PutInbox.URL("acme", "other"), `{"title":"x","description":"","ttl":{`+strings.Join(ttl, ",")+`}}`)
	apitest.WantError(t, r, 400, "validation_failed", "", "")
	assert.LessOrEqual(t, len(r.Body), 4096, "error size: %.300s", r.Body)
	assert.NotContains(t, string(r.Body), strings.Repeat("k", 65), "an error echoing the keys whole")
	var e apitest.ErrorBody
	r.JSON(t, &e)
	assert.Len(t, e.Error.Fields, api.MaxFieldErrors, "fields listed")
	assert.Contains(t, e.Error.Message, "more invalid fields", "message")
}
