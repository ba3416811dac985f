package itsm

import (
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
)

// TestSummaryProjection: the listing's projection, written out, reads
// every attribute of a Summary and no other, each placeholder named in
// summaryNames and every name used.
func TestSummaryProjection(t *testing.T) {
	servicetest.CheckProjection[Summary](t, summaryProjection, summaryNames, nil)
}
