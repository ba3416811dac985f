package contract

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// MinPepperBytes is the least pepper CallerIDFromPhone takes: 32 random
// bytes, as many as the hash's output.
const MinPepperBytes = 32

// maxCallerID is the longest caller id (the service's MaxCallerIDLen).
const maxCallerID = 128

// Errors of CallerIDFromPhone.
var (
	ErrNotE164     = errors.New("phone number must be E.164: + then 7 to 15 digits, the first not 0")
	ErrShortPepper = fmt.Errorf("pepper must be at least %d bytes", MinPepperBytes)
)

// CallerIDFromPhone is the caller_id of a phone number: PrefixCallerHash
// followed by the lowercase hex HMAC-SHA256 of the number in E.164 form,
// keyed with pepper, the desk backend's secret (docs/schemas/itsm.md,
// "Caller ids"). Spaces, hyphens, dots and parentheses are dropped first,
// so "+1 (555) 010-0199" and "+15550100199" give the same id; any other
// form of number is ErrNotE164. The pepper is what makes the id useless
// to whoever reads the table: a plain SHA-256 of every possible number is
// an afternoon's work.
func CallerIDFromPhone(phone string, pepper []byte) (string, error) {
	if len(pepper) < MinPepperBytes {
		return "", ErrShortPepper
	}
	e164 := strings.Map(func(r rune) rune {
		if strings.ContainsRune(" -.()", r) {
			return -1
		}
		return r
	}, phone)
	if !isE164(e164) {
		return "", ErrNotE164
	}
	m := hmac.New(sha256.New, pepper)
	m.Write([]byte(e164))
	return PrefixCallerHash + hex.EncodeToString(m.Sum(nil)), nil
}

// SessionCallerID is the caller_id of a session id (the telephony
// platform's contact or session id, never a number a person has).
func SessionCallerID(session string) string { return PrefixCallerSession + session }

// ErrCallerIDIsPhone is CheckCallerID's error for a value that reads as a
// phone number (with or without the session prefix): the one refusal a
// caller must hear before any other, whatever else is wrong with the value.
var ErrCallerIDIsPhone = errors.New("must not be a phone number (personal data)")

// CheckCallerID says why s is no caller id, or nil: a caller id is
// PrefixCallerSession and 1 to 123 letters, digits, '.', '_', '~' or '-'
// that do not read as a phone number, or PrefixCallerHash and 64
// lowercase hex digits. The message names both forms.
func CheckCallerID(s string) error {
	const forms = "send a session id (" + PrefixCallerSession + "<letters, digits, . _ ~ ->) or a hashed phone number (" +
		PrefixCallerHash + "<64 lowercase hex digits>, docs/schemas/itsm.md)"
	switch {
	case looksLikePhone(s) || looksLikePhone(strings.TrimPrefix(s, PrefixCallerSession)):
		return fmt.Errorf("%w: %s", ErrCallerIDIsPhone, forms)
	case strings.HasPrefix(s, PrefixCallerHash):
		h := s[len(PrefixCallerHash):]
		if len(h) != 2*sha256.Size || strings.ContainsFunc(h, func(r rune) bool { return !isLowerHex(r) }) {
			return errors.New("hash must be " + PrefixCallerHash + " and 64 lowercase hex digits: " + forms)
		}
		return nil
	case strings.HasPrefix(s, PrefixCallerSession):
		id := s[len(PrefixCallerSession):]
		if id == "" || len(s) > maxCallerID || strings.ContainsFunc(id, func(r rune) bool { return !isSessionRune(r) }) {
			return fmt.Errorf("session id must be %s and 1 to %d letters, digits, '.', '_', '~' or '-': %s",
				PrefixCallerSession, maxCallerID-len(PrefixCallerSession), forms)
		}
		return nil
	default:
		return errors.New("must be a session id or a hashed phone number: " + forms)
	}
}

// looksLikePhone: with the separators people write numbers with removed,
// an optional '+' and 7 or more digits and nothing else.
func looksLikePhone(s string) bool {
	digits := 0
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '+' && i == 0, strings.ContainsRune(" -.()_/", r):
		default:
			return false
		}
	}
	return digits >= 7
}

func isE164(s string) bool {
	if len(s) < 8 || len(s) > 16 || s[0] != '+' || s[1] == '0' {
		return false
	}
	return !strings.ContainsFunc(s[1:], func(r rune) bool { return r < '0' || r > '9' })
}

func isLowerHex(r rune) bool { return r >= '0' && r <= '9' || r >= 'a' && r <= 'f' }

func isSessionRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._~-", r)
}
