package stak_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

// TestPublishFanOutCap: a publish whose recipients times its item size
// would exceed stak.MaxPublishWriteUnits is refused with 413 before any
// write; below the cap, every recipient gets the message.
func TestPublishFanOutCap(t *testing.T) {
	s := newService(t)
	s.setup(t)
	uids := func(n int) string {
		list := make([]string, n)
		for i := range list {
			list[i] = fmt.Sprintf("%q", fmt.Sprintf("user-%03d", i))
		}
		return strings.Join(list, ",")
	}
	publish := func(audience string, bodyBytes int, category string) string {
		tax := ""
		if category != "" {
			tax = fmt.Sprintf(`,"taxonomy":{"category":%q}`, category)
		}
		return fmt.Sprintf(`{"sender":"ops","audiences":%s%s,"message":{"title":"t","body":%q}}`, audience, tax, strings.Repeat("x", bodyBytes))
	}
	users := func(n int) string { return fmt.Sprintf(`{"kind":"users","uids":[%s]}`, uids(n)) }
	tests := []struct {
		name   string
		body   string
		status int
		want   string // in the error message
	}{
		// ~0.5 KB items: 2 + 2×2 counter units = 6 per recipient, 600.
		{"100 small", publish(users(100), 100, "news"), 201, ""},
		// 3 KB items: 8 + 4 = 12 per recipient, 1200 > 1000.
		{"100 of 3 KB", publish(users(100), 3000, "news"), 413, "100 recipient(s) cost 1200 write units, at most 1000 per publish"},
		// A body at the cap (16,380 bytes of JSON) makes items of 17
		// started KB: 34 + 2×2 = 38 per recipient; 26 fit, 27 do not.
		{"26 at the body cap", publish(users(26), stak.MaxBodyBytes-4, "news"), 201, ""},
		{"27 at the body cap", publish(users(27), stak.MaxBodyBytes-4, "news"), 413, "27 recipient(s) cost 1026 write units"},
		// One public item is never near the cap.
		{"everyone at the body cap", publish(`{"kind":"everyone"}`, stak.MaxBodyBytes-4, "news"), 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.Count(t)
			r := s.Do(t, contract.Publish.Method, contract.Publish.URL("acme", "main"), tt.body)
			require.Equal(t, tt.status, r.Status, "status: %.300s", r.Body)
			after := s.Count(t)
			if tt.status != 201 {
				var e struct {
					Error struct{ Code, Message string } `json:"error"`
				}
				require.NoError(t, json.Unmarshal([]byte(r.Body), &e), "error body")
				assert.Equal(t, "too_large", e.Error.Code, "error code")
				assert.Contains(t, e.Error.Message, tt.want, "error message")
				assert.Equal(t, before, after, "items: a refused publish wrote")
				return
			}
			var out stak.Published
			r.JSON(t, &out)
			assert.NotEqual(t, before, after, "an accepted publish wrote nothing")
		})
	}
}
