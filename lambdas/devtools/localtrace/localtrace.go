// Package localtrace is dev-only code: X-Ray trace headers for the
// invocations an emulator of Lambda makes (the local runner, tests), as
// Lambda with active tracing starts a trace for an invocation that brings
// none (an HTTP API's, a schedule's, a stream batch's).
//
// Never import this package from code that runs in Lambda.
package localtrace

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// New returns a sampled trace header of a new trace, as X-Ray writes one:
// Root=1-<epoch seconds, 8 hex digits>-<96 random bits>;Parent=<64 random
// bits>;Sampled=1.
func New() string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=1", uint32(time.Now().Unix()), hex.EncodeToString(b[:12]), hex.EncodeToString(b[12:]))
}

// Or is header when it is set, else a new one (New).
func Or(header string) string {
	if header != "" {
		return header
	}
	return New()
}
