package contract_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The desk backend turns the caller's number into the caller_id it sends,
// with its own pepper (32 random bytes from its secret store; this one is a
// test value). The same number, however written, gives the same id.
func ExampleCallerIDFromPhone() {
	pepper := []byte("0123456789abcdef0123456789abcdef") // never a literal in real code
	id, err := contract.CallerIDFromPhone("+1 (555) 010-0199", pepper)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(id)
	same, _ := contract.CallerIDFromPhone("+15550100199", pepper)
	fmt.Println(same == id, contract.CheckCallerID(id) == nil)
	// Output:
	// hmac-sha256:a03ba99034c21836e1773030c9dcd3b14c4ab40dd78107008319434992c367a4
	// true true
}

// The formula docs/schemas/itsm.md gives non-Go callers.
func TestCallerIDFromPhoneIsTheDocumentedHMAC(t *testing.T) {
	pepper := bytes.Repeat([]byte{7}, contract.MinPepperBytes)
	got, err := contract.CallerIDFromPhone("+44 20 7946 0958", pepper)
	require.NoError(t, err)
	m := hmac.New(sha256.New, pepper)
	m.Write([]byte("+442079460958"))
	assert.Equal(t, "hmac-sha256:"+hex.EncodeToString(m.Sum(nil)), got, "HMAC-SHA256 of the E.164 number")

	other, err := contract.CallerIDFromPhone("+442079460958", bytes.Repeat([]byte{8}, contract.MinPepperBytes))
	require.NoError(t, err)
	assert.NotEqual(t, got, other, "another pepper, another id")
}

func TestCallerIDFromPhoneRefuses(t *testing.T) {
	pepper := bytes.Repeat([]byte{7}, contract.MinPepperBytes)
	for _, phone := range []string{"", "5550100199", "+0550100199", "+1555", "+1234567890123456", "+1 555 CALL NOW", "tel:+15550100199"} {
		_, err := contract.CallerIDFromPhone(phone, pepper)
		assert.ErrorIs(t, err, contract.ErrNotE164, "%q", phone)
	}
	_, err := contract.CallerIDFromPhone("+15550100199", pepper[:31])
	assert.ErrorIs(t, err, contract.ErrShortPepper, "a 31-byte pepper")
}

func TestCheckCallerID(t *testing.T) {
	hash := "hmac-sha256:" + strings.Repeat("ab", 32)
	tests := []struct {
		name, id, wantErr string
	}{
		{"session", "sess-3f2a6c1e-94b1-4c55-9f0e-2b7d8c1a0e55", ""},
		{"short session", "sess-a", ""},
		{"longest session", "sess-" + strings.Repeat("x", 123), ""},
		{"hash", hash, ""},
		{"E.164 number", "+15550100199", "must not be a phone number"},
		{"national number", "0301234567", "must not be a phone number"},
		{"written number", "(555) 010-0199", "must not be a phone number"},
		{"number as a session", "sess-+15550100199", "must not be a phone number"},
		{"number with dashes as a session", "sess-555-010-0199", "must not be a phone number"},
		{"no form", "poc-user-001", "must be a session id or a hashed phone number"},
		{"empty session", "sess-", "session id must be"},
		{"session too long", "sess-" + strings.Repeat("x", 124), "session id must be"},
		{"session with a colon", "sess-a:b", "session id must be"},
		{"short hash", hash[:len(hash)-2], "hash must be"},
		{"uppercase hash", "hmac-sha256:" + strings.Repeat("AB", 32), "hash must be"},
		{"plain sha256 prefix", "sha256:" + strings.Repeat("ab", 32), "must be a session id or a hashed phone number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := contract.CheckCallerID(tt.id)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr, "reason")
			assert.Contains(t, err.Error(), "sess-", "names the session form")
			assert.Contains(t, err.Error(), "hmac-sha256:", "names the hash form")
		})
	}
}
