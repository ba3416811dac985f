package stak_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

// A publish's stored answer lives no longer than the message it describes
// (issue 29): a "flash" message expires after 60 s (setup's inbox), so a
// retry with the same Idempotency-Key within them replays the answer, and
// one after them publishes anew instead of answering for a message that is
// gone.
func TestPublishAnswerExpiresWithItsMessage(t *testing.T) {
	s := newService(t)
	s.setup(t)
	body := `{"sender":"a","audiences":{"kind":"users","uids":["u1"]},"taxonomy":{"category":"flash"},"message":{"title":"Sale ends"}}`
	path := stakcontract.Publish.URL("acme", "main")
	var first, replay, later stak.Published
	r := s.Do(t, stakcontract.Publish.Method, path, body, api.IdempotencyHeader, "flash-1")
	require.Equal(t, 201, r.Status, "first: %s", r.Body)
	r.JSON(t, &first)
	s.clock.Advance(30 * time.Second)
	r = s.Do(t, stakcontract.Publish.Method, path, body, api.IdempotencyHeader, "flash-1")
	require.Equal(t, 201, r.Status, "within the message's TTL: %s", r.Body)
	r.JSON(t, &replay)
	assert.Equal(t, "true", r.Header.Get("Idempotent-Replayed"), "within the message's TTL: replayed")
	assert.Equal(t, first.Header.ID, replay.Header.ID, "within the message's TTL: the same message")
	s.clock.Advance(45 * time.Second)
	r = s.Do(t, stakcontract.Publish.Method, path, body, api.IdempotencyHeader, "flash-1")
	require.Equal(t, 201, r.Status, "after the message expired: %s", r.Body)
	r.JSON(t, &later)
	assert.Empty(t, r.Header.Get("Idempotent-Replayed"), "after the message expired: not a replay")
	assert.NotEqual(t, first.Header.ID, later.Header.ID, "after the message expired: a new message")
}
