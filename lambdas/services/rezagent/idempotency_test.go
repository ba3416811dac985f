package rezagent_test

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// A message near DynamoDB's item limit has an answer over 300 KB; the
// retry of its create with the same Idempotency-Key (the first answer
// lost) replays it and creates no second message. Before, an answer that
// large released the key and the retry created the message again.
func TestLargeMessageCreatedOnceWithIdempotencyKey(t *testing.T) {
	s := newService(t, options{})
	blob := make([]byte, 260<<10) // 347 KB of base64: random, so it hardly compresses
	_, _ = rand.Read(blob)
	body := `{"message_type":"deployment_notification","created_by":"ci","payload":{"blob":"` + base64.StdEncoding.EncodeToString(blob) + `"}}`
	first := s.Do(t, contract.CreateMessage.Method, contract.CreateMessage.URL(), body, api.IdempotencyHeader, "big-1")
	require.Equal(t, http.StatusCreated, first.Status, "first")
	require.Greater(t, len(first.Body), 300<<10, "the first answer is over 300 KB")
	again := s.Do(t, contract.CreateMessage.Method, contract.CreateMessage.URL(), body, api.IdempotencyHeader, "big-1")
	require.Equal(t, http.StatusCreated, again.Status, "retry")
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"), "retry: replayed")
	assert.Equal(t, first.Header.Get("Location"), again.Header.Get("Location"), "retry: the first message")
	ids, _ := s.all(t, "")
	assert.Len(t, ids, 1, "messages after a create and its retry")
}
