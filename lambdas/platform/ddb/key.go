package ddb

import (
	"crypto/sha256"

	"github.com/dynastack/dynastack/constructs/service"
)

// CursorKeyFromEnv returns the key set in service.EnvCursorKey (any string) or, when that is unset, the
// SHA-256 of seed. A derived key still detects tampering and binds cursors
// to their scope, but it is not secret: seed is meant to be the service
// name and its table names, so that every instance derives the same key
// and a renamed table retires old cursors. Changing a seed invalidates the
// cursors clients hold.
func CursorKeyFromEnv(getenv func(string) string, seed string) []byte {
	if k := getenv(service.EnvCursorKey); k != "" {
		return []byte(k)
	}
	sum := sha256.Sum256([]byte(seed))
	return sum[:]
}
