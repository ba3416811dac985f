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

	"github.com/dynastack/dynastack/lambdas/devtools/apitest"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

func TestHostileInput(t *testing.T) {
	s := newService(t)
	s.setup(t)
	const publish = `{"sender":"admin","audiences":{"kind":"users","uids":["u1"]},"message":{"title":"t","body":{"n":1}}}`
	s.Hostile(t, s.api,
		apitest.Write{Method: "PUT", Path: "/tenants/acme/settings", Body: `{"title":"Acme","ttl":"10d"}`},
		apitest.Write{Method: "PUT", Path: "/tenants/acme/inboxes/main", Body: `{"title":"Main","ttl":{"default":"7d"}}`},
		apitest.Write{Method: "POST", Path: "/tenants/acme/inboxes/main/messages", Body: publish},
		apitest.Write{Method: "POST", Path: "/tenants/acme/inboxes/main/messages", Body: `{"sender":"admin","message":{"title":"t","body":1},"audiences":{"kind":"everyone"}}`, Doc: "message"},
		apitest.Write{Method: "POST", Path: "/tenants/acme/inboxes/main/users/u1/read-all", Body: `{"cursor":"","limit":5}`},
		apitest.Write{Method: "POST", Path: "/admin/tenants/acme/inboxes/main/recount", Body: `{"uid":"u1"}`},
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
			r := s.Do(t, "POST", "/tenants/acme/inboxes/main/messages", `{"sender":"admin","audiences":{"kind":"users","uids":["u9"]},"message":{"title":"t","body":`+tt.body+`}}`)
			if r.Status != tt.status {
				t.Fatalf("%d %.300s, want %d", r.Status, r.Body, tt.status)
			}
			if tt.status >= 400 && s.Digest(t) != before {
				t.Error("a refused publish changed the table")
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
	r := s.Do(t, "POST", "/tenants/acme/inboxes/main/messages", `{"sender":"admin","audiences":{"kind":"users","uids":["u1"]},"message":{"title":"<i>","body":`+body+`}}`)
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	for _, want := range []string{"12345678901234567890123", "99999999999999999999999999999999999999", `"<b>&amp;</b>"`, `"<i>"`} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("publish answer lacks %s: %s", want, r.Body)
		}
	}
	feed := s.Do(t, "GET", "/tenants/acme/inboxes/main/users/u1/messages", "")
	for _, want := range []string{"12345678901234567890123", "99999999999999999999999999999999999999", `"<b>&amp;</b>"`} {
		if !strings.Contains(string(feed.Body), want) {
			t.Errorf("feed lacks %s: %s", want, feed.Body)
		}
	}
	if strings.Contains(string(feed.Body), `\u003c`) || strings.Contains(string(feed.Body), "e+22") {
		t.Errorf("feed altered the body: %s", feed.Body)
	}
	// Stored as DynamoDB numbers, digit for digit.
	out, err := s.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(s.Table)})
	if err != nil {
		t.Fatal(err)
	}
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
	if !found {
		t.Error("no stored body with big = N 12345678901234567890123")
	}
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
	if err != nil {
		t.Fatal(err)
	}
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
		if err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	q, pages := "?limit=100", 0
	for {
		r := s.Do(t, "GET", "/tenants/acme/inboxes/main/users/u1/messages"+q, "")
		if r.Status != 200 {
			t.Fatalf("%d %.200s", r.Status, r.Body)
		}
		escaped, _ := json.Marshal(string(r.Body))
		if len(escaped) > stak.MaxPageBytes {
			t.Errorf("page %d is %d bytes as a JSON string, over %d", pages, len(escaped), stak.MaxPageBytes)
		}
		var p struct {
			Messages []stak.Message `json:"messages"`
			Next     string         `json:"next_cursor"`
		}
		r.JSON(t, &p)
		pages++
		for _, m := range p.Messages {
			if seen[m.Message.Title] {
				t.Errorf("%s on two pages", m.Message.Title)
			}
			seen[m.Message.Title] = true
		}
		if p.Next == "" {
			break
		}
		q = "?limit=100&cursor=" + p.Next
	}
	if len(seen) != n || pages < 2 {
		t.Errorf("%d messages on %d pages, want %d on several", len(seen), pages, n)
	}
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
	r := s.Do(t, "PUT", "/tenants/acme/inboxes/other", `{"title":"x","description":"","ttl":{`+strings.Join(ttl, ",")+`}}`)
	apitest.WantError(t, r, 400, "validation_failed", "", "")
	if len(r.Body) > 4096 || strings.Contains(string(r.Body), strings.Repeat("k", 65)) {
		t.Errorf("a %d-byte error echoing the keys: %.300s", len(r.Body), r.Body)
	}
	var e apitest.ErrorBody
	r.JSON(t, &e)
	if len(e.Error.Fields) != api.MaxFieldErrors || !strings.Contains(e.Error.Message, "more invalid fields") {
		t.Errorf("%d fields listed; message %q", len(e.Error.Fields), e.Error.Message)
	}
}
