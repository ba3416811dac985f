package nucleus_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// The generated external id is shown once: a create retried with its
// Idempotency-Key answers the account again without it, and says so, so
// the id never sits in the idempotency record nor reaches whoever replays
// the key.
func TestReplayedCreateHidesTheExternalID(t *testing.T) {
	s := newService(t, options{})
	b, err := json.Marshal(map[string]string{"account_id": "123456789012", "account_name": "dev", "role_arn": roleARN("123456789012")})
	require.NoError(t, err)
	first := s.Do(t, contract.CreateAccount.Method, contract.CreateAccount.URL(), string(b), api.IdempotencyHeader, "create-1")
	require.Equal(t, http.StatusCreated, first.Status, "%s", first.Body)
	var shown map[string]any
	first.JSON(t, &shown)
	require.NotEmpty(t, shown[contract.AttrExternalID], "the create shows the external id")

	again := s.Do(t, contract.CreateAccount.Method, contract.CreateAccount.URL(), string(b), api.IdempotencyHeader, "create-1")
	require.Equal(t, http.StatusCreated, again.Status, "%s", again.Body)
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	assert.Equal(t, contract.AttrExternalID, again.Header.Get(api.RedactedHeader))
	var replayed map[string]any
	again.JSON(t, &replayed)
	assert.NotContains(t, replayed, contract.AttrExternalID, "the replay leaves the external id out")
	assert.Equal(t, shown["account_id"], replayed["account_id"], "the replay is the same account")
	assert.NotContains(t, string(again.Body), shown[contract.AttrExternalID], "the external id nowhere in the replay")
	for _, item := range s.items(t, s.tables.App) {
		for k, v := range item {
			if k != contract.AttrExternalID {
				assert.NotContains(t, fmtValue(v), shown[contract.AttrExternalID], "the external id stored only in the account's own attribute, not in %s", k)
			}
		}
	}
}

// fmtValue is an attribute's value as text: a binary one (the stored
// answer's body) as its bytes, the rest as JSON.
func fmtValue(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
