package rezagent

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// updateHeadroom must cover the most a status change sequence can add to an
// item after Create: compare a fresh message with the same message after
// processing, a billion redeliveries and a failure with the longest error.
func TestUpdateHeadroom(t *testing.T) {
	ts := Timestamp(time.Now())
	fresh := Message{Summary: Summary{MessageID: "3f1d7e3a-0000-4000-8000-000000000000", CreatedDate: ts, CreatedBy: "s", Stage: "dev",
		MessageType: "t", Status: StatusQueued, UpdatedDate: ts, CorrelationID: "c", TTL: 1 << 40}, Payload: Payload{}}
	worst := fresh
	worst.Status = StatusProcessing
	worst.ProcessingStartedAt, worst.ProcessingCompletedAt = ts, ts
	worst.ErrorMessage = strings.Repeat("€", MaxErrorMessageBytes/3)
	worst.NotificationID = strings.Repeat("n", MaxNotificationIDLen) // never with error_message, counted anyway
	worst.RetryCount = 1 << 40
	worst.LeaseToken = strings.Repeat("l", maxLeaseTokenLen) // removed on completion, counted anyway
	worst.LeaseUntil = 1 << 50
	size := func(m Message) int {
		item, err := attributevalue.MarshalMap(m)
		require.NoError(t, err)
		return ddb.ItemSize(item)
	}
	assert.LessOrEqual(t, size(worst)-size(fresh), updateHeadroom, "bytes status changes can add, against updateHeadroom")
}

func TestCeilMicro(t *testing.T) {
	base := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	for ns, want := range map[int]int{0: 0, 1: 1000, 999: 1000, 1000: 1000, 1001: 2000} {
		assert.Equal(t, time.Duration(want), ceilMicro(base.Add(time.Duration(ns))).Sub(base), "ceilMicro(+%dns)", ns)
	}
}

// TestSummaryProjection: a listing's projection, written out, reads every
// attribute of a Summary that the API serves (json not "-") and no other,
// each placeholder named in summaryNames and every name used.
func TestSummaryProjection(t *testing.T) {
	servicetest.CheckProjection[Summary](t, summaryProjection, summaryNames,
		func(f reflect.StructField) bool { return f.Tag.Get("json") != "-" },
		"#stage", "#status", "#type", "#created", "#ttl") // a key condition's or the filter's
}
